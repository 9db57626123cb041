-- ctx:capture(fn) and its graphs: g:replay([n]), g:free() (docs/graphs.md).
--
-- A capture runs fn with this rank's launches recorded instead of run (the backend's capture: a stream
-- capture on GPUs, a list of launches on cpu) and ends collectively: the ranks exchange whether fn
-- failed and which collectives each captured, so that every rank gets the same outcome (a graph, or
-- the same error) and no rank keeps half a capture. While fn runs, operations that make the host wait
-- refuse at once (M.refuse, called by those operations where they start: each reads M.state.on, one
-- table read while no capture runs), and a launch notes the tensors it was given: the graph keeps
-- them, so that none is collected while it may replay, and a replay refuses once one was freed.
local ffi = require "ffi"
local errors = require "iris.errors"
local trace = require "iris.trace"
local C = ffi.C

local M = {}

-- Read where it must cost nothing while off (each launch, each element access on a GPU backend).
M.state = { on = false }

-- The capture in progress: { tensors = {t, ...}, user = {[t] = kernel label}, collectives = {...} }.
local recording

-- Names a refusal gives the metamethods that read or write a tensor on the host.
local METAMETHOD_CALLS = { __index = "t[i]", __newindex = "t[i] = v", __tostring = "tostring(t)", __len = "#t",
  __eq = "t == u", __concat = "..", __call = "a call" }

-- The operation the user's line called, as written there: "t:to_table()", "iris.assert_equal()",
-- "print()"; nil when it cannot be told.
local function called_operation()
  local level, user = 2, nil
  while true do
    local info = debug.getinfo(level, "S")
    if not info then return nil end
    if info.what ~= "C" and not package.loaded["iris.host"].is_iris_chunk(info.source) then
      user = level
      break
    end
    level = level + 1
  end
  local called = debug.getinfo(user - 1, "n")
  if not called or not called.name then return nil end
  if called.namewhat == "metamethod" then return METAMETHOD_CALLS[called.name] end
  if called.namewhat == "method" then return ("t:%s()"):format(called.name) end
  if iris and iris[called.name] then return ("iris.%s()"):format(called.name) end
  return called.name .. "()"
end

local DEFAULT_REASON = "it makes the host wait for the device or for the other ranks, and nothing fn launches "
  .. "runs before g:replay()"

-- Raises, at the user's line, the error of an operation that cannot run inside a capture. `what` names
-- it ("ctx:barrier()"; nil: the function the user's line called, else `fallback`); `why` says why.
function M.refuse(what, why, fallback)
  what = what or called_operation() or fallback or "reading or writing a tensor on the host"
  errors.raise("invalid_argument", "%s cannot run inside ctx:capture(fn): %s; do it before or after the capture",
    what, why or DEFAULT_REASON)
end


-- ---- what a capture records besides the launches --------------------------------------------------------

local is_tensor -- iris.tensor's, looked up at the first launch captured (iris.tensor requires this module)

-- A launch of `kernel` with these arguments is being captured (iris.kernel's launch functions).
-- The tensor each tensor map (ctx:tensor_map) describes: a launch that passes the map uses the tensor.
M.map_tensors = setmetatable({}, { __mode = "k" })

function M.note_launch(kernel, ...)
  if not is_tensor then is_tensor = require("iris.tensor").is_tensor end
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "cdata" then v = M.map_tensors[v] end
    if v ~= nil and is_tensor(v) and not recording.user[v] then
      recording.user[v] = kernel.label
      recording.tensors[#recording.tensors + 1] = v
    end
  end
end

-- A collective is being captured: `what` ("ctx:device_barrier()", "ctx.ccl.all_reduce") with `members`
-- (a sorted list of ranks; nil: every rank). Ranks compare these when the capture ends.
function M.note_collective(what, members)
  local list = recording.collectives
  list[#list + 1] = { what = what, members = members and table.concat(members, ",") or "*",
    line = errors.user_line() or "?" }
end

-- One collective per line: what, members and line, tab-separated.
local function encode(collectives)
  local lines = {}
  for i, c in ipairs(collectives) do lines[i] = ("%s\t%s\t%s"):format(c.what, c.members, c.line) end
  return table.concat(lines, "\n")
end

local function decode(text)
  local list = {}
  for line in text:gmatch("[^\n]+") do
    local what, members, where = line:match("^(.-)\t(.-)\t(.*)$")
    local set
    if members ~= "*" then
      set = {}
      for r in members:gmatch("%d+") do set[tonumber(r)] = true end
    end
    list[#list + 1] = { what = what, members = members, set = set, line = where }
  end
  return list
end

local function ordinal(n)
  local suffix = (n % 100 >= 11 and n % 100 <= 13) and "th" or ({ "st", "nd", "rd" })[n % 10] or "th"
  return n .. suffix
end

-- The collectives of `list` that `rank` takes part in, in order.
local function shared_with(list, rank)
  local out = {}
  for _, c in ipairs(list) do
    if not c.set or c.set[rank] then out[#out + 1] = c end
  end
  return out
end

-- nil when every pair of ranks captured the same collectives among themselves (a collective of a group
-- concerns its members only); else the mismatch, worded the same on every rank.
local function collective_mismatch(lists)
  for r = 0, #lists do
    for s = r + 1, #lists do
      local mine, theirs = shared_with(lists[r], s), shared_with(lists[s], r)
      for i = 1, math.max(#mine, #theirs) do
        local a, b = mine[i], theirs[i]
        if not a or not b or a.what ~= b.what or a.members ~= b.members then
          local function said(c) return c and ("%s (%s)"):format(c.what, c.line) or "nothing" end
          return ("rank %d captured %s as its %s collective with rank %d, which captured %s there"):format(r, said(a),
            ordinal(i), s, said(b))
        end
      end
    end
  end
end

-- ---- graphs ---------------------------------------------------------------------------------------------

local Graph = {}
Graph.__index = Graph
M.Graph = Graph

local function check_graph(g, what)
  if getmetatable(g) ~= Graph then
    errors.raise("invalid_argument", "%s: call it on a graph with a colon: g:%s(...)", what, what:match(":(%w+)"))
  end
end

-- Where graphs were freed, for the message when one is replayed afterwards.
local freed_where = setmetatable({}, { __mode = "k" })

function Graph.replay(g, n)
  check_graph(g, "g:replay")
  if n == nil then n = 1 end
  if type(n) ~= "number" or n % 1 ~= 0 or n < 0 or n >= 2 ^ 53 then
    errors.raise("invalid_argument", "g:replay([n]): n must be a whole number of replays >= 0, got %s", tostring(n))
  end
  if g._handle == nil then
    errors.raise("invalid_argument", "g:replay: this graph was freed (g:free() at %s); capture it again",
      freed_where[g] or "?")
  end
  if M.state.on then M.refuse("g:replay()", "a graph replays outside any capture (capture fn's launches instead)") end
  for _, t in ipairs(g._tensors) do
    if t._alloc[1] ~= 0 then
      local freed_at = require("iris.tensor").freed_at(t)
      errors.raise("invalid_argument", "g:replay: the graph captured at %s launches %s on a tensor that was freed "
        .. "since (t:free()%s); free the graph (g:free()) or capture it again with live tensors", g._origin,
        g._tensor_users[t], freed_at and (" at " .. freed_at) or "")
    end
  end
  if trace.state.on then trace.note_origin() end
  errors.check(C.iris_graph_replay(g._handle, n))
end

function Graph.free(g)
  check_graph(g, "g:free")
  if g._handle == nil then return end
  local handle = g._handle
  g._handle, g._tensors, g._tensor_users = nil, {}, {}
  freed_where[g] = errors.user_line() or "?"
  errors.check(C.iris_graph_free(ffi.gc(handle, nil)))
end

function Graph.__tostring(g)
  return ("iris graph captured at %s: %d kernel%s%s"):format(g._origin, g.kernels, g.kernels == 1 and "" or "s",
    g._handle == nil and " (freed)" or "")
end

local function release(handle) C.iris_graph_free(handle) end

-- ---- the capture -------------------------------------------------------------------------------------------

local out_graph, out_kernels = ffi.new("iris_graph*[1]"), ffi.new("uint64_t[1]")

-- Runs fn with the capture on; returns ok, and the error when fn or the capture's end failed. On
-- success the backend's graph is in out_graph/out_kernels.
local function record(fn, label)
  local began, why = pcall(errors.check, C.iris_capture_begin())
  if not began then return false, why end
  M.state.on = true
  local tensor = require "iris.tensor"
  tensor.capturing(true) -- element access goes through the guarded path
  local ok, err = pcall(fn)
  M.state.on = false
  tensor.capturing(false)
  if ok then
    ok, err = pcall(errors.check, C.iris_capture_end(label, out_graph, out_kernels))
  else
    C.iris_capture_abort()
  end
  return ok, err
end

-- ctx:capture(fn) (iris.context attaches it and checks that it is called on the context).
function M.capture(ctx, fn)
  if type(fn) ~= "function" then
    errors.raise("invalid_argument", "ctx:capture(fn): fn must be a function whose launches make the graph, got %s",
      fn == nil and "nil" or ("a " .. type(fn)))
  end
  if M.state.on then M.refuse("ctx:capture()", "captures do not nest") end
  errors.check(C.iris_comm_require_every_rank("ctx:capture(fn)")) -- the REPL's :on R: others never end it
  local origin = errors.user_line() or "?"
  local started = trace.state.on and C.iris_trace_now()
  recording = { tensors = {}, user = {}, collectives = {} }
  local ok, err = record(fn, "the graph captured at " .. origin)
  local mine = recording
  recording = nil
  local handle = ok and ffi.gc(out_graph[0], release) or nil
  local kernels = tonumber(out_kernels[0])

  -- Every rank learns every rank's outcome: fn's error, or the collectives it captured.
  local outcome = ok and ("ok\n" .. encode(mine.collectives)) or ("failed\n" .. tostring(err))
  local exchange = require "iris.exchange"
  local all = exchange.exchange(exchange.JOB, exchange.TO_ALL, 0, "ctx:capture(fn)", outcome)
  local failed, lists = nil, {}
  for r = 0, ctx.world_size - 1 do
    local status, rest = all[r]:match("^(%a+)\n(.*)$")
    if status == "failed" and not failed then failed = { rank = r, message = rest } end
    lists[r] = status == "ok" and decode(rest) or {}
  end
  if started then
    C.iris_trace_span("capture", "capture", started, C.iris_trace_now(),
      require("iris.json").members { line = origin, kernels = ok and kernels or 0 })
  end
  if not ok then error(err, 0) end -- this rank's own error, as fn raised it
  local mismatch = not failed and collective_mismatch(lists)
  if failed or mismatch then
    C.iris_graph_free(ffi.gc(handle, nil))
    if failed then
      errors.raise("invalid_argument", "ctx:capture(fn) failed on rank %d, so no rank keeps its graph: %s",
        failed.rank, failed.message)
    end
    errors.raise("invalid_argument", "ctx:capture(fn): the ranks captured different collectives (%s); every rank "
      .. "must capture the collectives it takes part in, in the same order, or a replay waits for ranks whose "
      .. "graphs never arrive. No rank keeps its graph", mismatch)
  end
  return setmetatable({ _handle = handle, _origin = origin, _tensors = mine.tensors, _tensor_users = mine.user,
    kernels = kernels }, Graph)
end

return M
