-- iris.trace: one timeline of the whole job (docs/tracing.md).
--
--   iris.trace.start("trace.json")     collective; also {file=, device_events=, host_events=}
--   iris.trace.mark("phase 2", {n = 3})  an instant on this rank's timeline, at the script's line
--   iris.trace.span("setup", fn, ...)    fn(...) as a span of this rank's timeline; returns its results
--   iris.trace.names{[4096] = "pack"}    names for the ids kernels pass to ctx.trace_begin
--   iris.trace.stop()                    collective: rank 0 writes the file; returns what this rank measured
-- `iris-lua --trace FILE` and IRIS_TRACE=FILE start a trace before the script and stop it at the end.
--
-- The mechanism is C++ (src/session/trace_session.*); here are the arguments, and the script lines:
-- the C++ side records a span for each launch, allocation, barrier, ..., and the Lua side tells it,
-- only while a trace is on, which line of the script the next call is for (M.note_origin).
local ffi = require "ffi"
local errors = require "iris.errors"
local json = require "iris.json"
local C = ffi.C

local M = {}

-- Read where it must cost nothing while off (each launch): `if trace.state.on then ... end`.
M.state = { on = false }

local function refresh() M.state.on = C.iris_trace_running() == 1 end

-- The user's script line (or `line`), for the spans of the C call that follows.
function M.note_origin(line)
  C.iris_trace_origin(line or errors.user_line() or "")
end

local describe = errors.describe

-- args: a table of names to numbers, strings and booleans; "line" added.
local function members(what, args)
  if args ~= nil and type(args) ~= "table" then
    errors.raise("invalid_argument", "%s: args must be a table such as {n = 3}, got %s", what, describe(args))
  end
  local copy = { line = errors.user_line() }
  for key, value in pairs(args or {}) do
    local kind = type(value)
    if type(key) ~= "string" or (kind ~= "number" and kind ~= "string" and kind ~= "boolean") then
      errors.raise("invalid_argument", "%s: args are names with numbers, strings or booleans; %s = %s is not",
        what, tostring(key), describe(value))
    end
    copy[key] = value
  end
  return json.members(copy)
end

local function count(what, value, name, maximum)
  if value == nil then return 0 end
  if type(value) ~= "number" or value % 1 ~= 0 or value < 1 or value > maximum then
    errors.raise("invalid_argument", "%s: %s must be a whole number from 1 to %d, got %s", what, name, maximum,
      describe(value))
  end
  return value
end

M.START_OPTIONS = { "file", "device_events", "host_events" }

-- Collective. `options`: the file, or {file=, device_events=, host_events=}.
-- While ctx:capture(fn) runs, neither: both wait for every rank and the device (iris.graph requires
-- this module, so it is found when called).
local function refuse_in_capture(what)
  local graph = package.loaded["iris.graph"]
  if graph and graph.state.on then graph.refuse(what) end
end

function M.start(options)
  local what = "iris.trace.start"
  refuse_in_capture("iris.trace.start()")
  if type(options) == "string" then options = { file = options } end
  if options ~= nil and type(options) ~= "table" then
    errors.raise("invalid_argument", "%s(file or {file=, device_events=, host_events=}): got %s", what, describe(options))
  end
  options = options or {}
  errors.check_keys(options, M.START_OPTIONS, what)
  if options.file ~= nil and (type(options.file) ~= "string" or options.file == "") then
    errors.raise("invalid_argument", "%s: file must be a file name, got %s", what, describe(options.file))
  end
  local device_events = count(what, options.device_events, "device_events", 100000000)
  local host_events = count(what, options.host_events, "host_events", 1000000000)
  errors.check(C.iris_trace_start(options.file or "", device_events, host_events))
  refresh()
end

local summary = ffi.new("iris_trace_summary")

local function us(ns) return tonumber(ns) / 1000 end

-- Collective. Returns this rank's figures: file, host_events, host_dropped, launches, device_events,
-- device_overflow, clock_offset_us and clock_error_us (its host clock against rank 0's),
-- launch_pin_error_us and device_clock_error_us (its device's clocks against its host's).
function M.stop(file)
  refuse_in_capture("iris.trace.stop()")
  if file ~= nil and (type(file) ~= "string" or file == "") then
    errors.raise("invalid_argument", "iris.trace.stop([file]): file must be a file name, got %s", describe(file))
  end
  local status = C.iris_trace_stop(file or "", summary)
  refresh()
  errors.check(status)
  return {
    file = ffi.string(summary.file),
    host_events = tonumber(summary.host_events),
    host_dropped = tonumber(summary.host_dropped),
    launches = tonumber(summary.launches),
    device_events = tonumber(summary.device_events),
    device_overflow = tonumber(summary.device_overflow),
    clock_offset_us = us(summary.host_offset_ns),
    clock_error_us = us(summary.host_offset_error_ns),
    launch_pin_error_us = us(summary.launch_pin_error_ns),
    device_clock_error_us = us(summary.clock_pin_error_ns),
  }
end

function M.running() return C.iris_trace_running() == 1 end

function M.mark(name, args)
  if type(name) ~= "string" then
    errors.raise("invalid_argument", "iris.trace.mark(name [, args]): name must be a string, got %s", describe(name))
  end
  if not M.state.on then return end
  C.iris_trace_mark(name, members("iris.trace.mark", args))
end

-- fn(...) timed as a span named `name` of category `category` with `args` (a table): iris's own
-- modules wrap host work in it (ctx.ccl's calls, with their sizes).
function M.host_span(name, category, args, fn, ...)
  if not M.state.on then return fn(...) end
  local text = members(name, args)
  local start = C.iris_trace_now()
  local function finish(...)
    C.iris_trace_span(name, category, start, C.iris_trace_now(), text)
    return ...
  end
  return finish(fn(...))
end

function M.span(name, fn, ...)
  if type(name) ~= "string" or type(fn) ~= "function" then
    errors.raise("invalid_argument", "iris.trace.span(name, fn, ...): a name and a function, got %s and %s",
      describe(name), describe(fn))
  end
  return M.host_span(name, "user", nil, fn, ...)
end

function M.names(names)
  if type(names) ~= "table" then
    errors.raise("invalid_argument", "iris.trace.names{[id] = name, ...}: got %s", describe(names))
  end
  for id, name in pairs(names) do
    if type(id) ~= "number" or id % 1 ~= 0 or id < 0 or id > 0xfffffffe or type(name) ~= "string" then
      errors.raise("invalid_argument", "iris.trace.names: ids are whole numbers from 0 to 4294967294 with string "
        .. "names; [%s] = %s is not", tostring(id), describe(name))
    end
    C.iris_trace_name_event(id, name)
  end
end

-- The command line's start (iris-lua --trace FILE, IRIS_TRACE=FILE): called once, before anything runs.
function M.start_requested()
  local file = ffi.string(C.iris_trace_requested())
  if file == "" then return end
  local events = ffi.new("uint32_t[1]")
  errors.check(C.iris_trace_requested_events(events))
  M.start { file = file, device_events = events[0] ~= 0 and events[0] or nil }
end

-- iris.trace (iris.lua attaches it).
M.public = { start = M.start, stop = M.stop, mark = M.mark, span = M.span, names = M.names, running = M.running }

return M
