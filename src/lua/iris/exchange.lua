-- Bytes between the ranks (iris_exchange_bytes, src/capi/iris_capi.h): the one way the Lua side's own
-- protocols travel, the test runner's case results, the REPL's commands and results and ctx:broadcast's
-- values alike.
local ffi = require "ffi"
require "iris.cdef"
local errors = require "iris.errors"
local C = ffi.C

local M = {}

M.JOB, M.SESSION, M.SESSION_WATCHED = C.IRIS_LANE_JOB, C.IRIS_LANE_SESSION, C.IRIS_LANE_SESSION_WATCHED
M.TO_ALL, M.FROM_ROOT, M.TO_ROOT = C.IRIS_ROUTE_TO_ALL, C.IRIS_ROUTE_FROM_ROOT, C.IRIS_ROUTE_TO_ROOT

local received = ffi.new("const char*[1]")

-- Collective on `lane`: every rank passes `bytes` (a string) and gets what `route` brings it from each
-- rank, as a table indexed by rank from 0 ("" where nothing came). `op` names the exchange in the
-- message of a rank that is in another collective (IRIS_LANE_JOB).
function M.exchange(lane, route, root, op, bytes)
  local n = C.iris_world_size()
  local lengths = ffi.new("uint64_t[?]", n)
  errors.check_waiting(C.iris_exchange_bytes, lane, route, root, op, bytes, #bytes, received, lengths)
  local out, offset = {}, 0
  for r = 0, n - 1 do
    local length = tonumber(lengths[r])
    out[r] = ffi.string(received[0] + offset, length)
    offset = offset + length
  end
  return out
end

return M
