-- Shared by the fault-injection scenarios: tells the driver this rank's process id, then when it
-- reaches the phase the driver aims its signal at, and keeps the job alive long after the window so
-- that a signal always meets a running job.
local ffi = require "ffi"
pcall(ffi.cdef, "int getpid(void);")
local M = {}
local dir = assert(os.getenv("IRIS_FI_DIR"), "IRIS_FI_DIR is not set: run through tests/fault_injection/inject.sh")

local function mark(name)
  local f = assert(io.open(("%s/%s.%d"):format(dir, name, iris.rank()), "w"))
  f:write(tostring(ffi.C.getpid()))
  f:close()
end

-- This rank's pid, for the driver; call first.
function M.started() mark("pid") end
-- The phase the signal is aimed at starts now on this rank.
function M.ready() mark("ready") end

-- Runs `step` over and over for `seconds` (the driver has long signalled by then); not at all in the
-- driver's warm-up run (IRIS_FI_WARMUP), which only compiles what the scenario needs before its phase.
function M.keep_going(seconds, step)
  if os.getenv("IRIS_FI_WARMUP") then return end
  local deadline = os.time() + seconds
  while os.time() < deadline do step() end
end

return M
