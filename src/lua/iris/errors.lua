-- The Lua side of the error vocabulary (the C++ side is src/core/errors.def).
--
-- errors.raise(kind, fmt, ...) raises "file:line: message" where file:line is the user's line: the
-- innermost stack frame that is not part of the iris module (embedded chunks are named "=iris/...").
-- The kind is remembered for the message, so the host can exit with its kind's code (2 for usage and
-- environment errors, 1 for the rest: src/core/errors.def) even after the error passed through pcall
-- and error() again.
local ffi = require "ffi"
local C = ffi.C

local M = {}

local kind_of_message = {}
local remembered = 0

local function remember(message, kind)
  remembered = remembered + 1
  if remembered > 1000 then -- bounded: only recent errors can still be on their way to the top
    kind_of_message = {}
    remembered = 1
  end
  kind_of_message[message] = kind
end

local function is_iris_frame(info)
  local source = info.source
  return info.what == "C" or source:sub(1, 5) == "=iris" or source == "=(host)" or source == "=(require)"
end

-- debug.getinfo(level, "Sl") of the innermost user frame, or nil when there is none.
function M.user_frame()
  local level = 2
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info or not is_iris_frame(info) then return info end
    level = level + 1
  end
end

-- "script.lua:12: " for the innermost user frame, or "" when there is none (errors at top level).
function M.where()
  local info = M.user_frame()
  if not info then return "" end
  if info.currentline and info.currentline > 0 then
    return info.short_src .. ":" .. info.currentline .. ": "
  end
  return info.short_src .. ": "
end

-- The user's line as "script.lua:12", or nil: for labels like "put_ones (script.lua:12)".
function M.user_line()
  local where = M.where()
  if where == "" then return nil end
  return (where:gsub(": $", ""))
end

function M.message(kind, fmt, ...)
  local text = select("#", ...) > 0 and fmt:format(...) or fmt
  local message = M.where() .. text
  remember(message, kind)
  return message
end

function M.raise(kind, fmt, ...)
  error(M.message(kind, fmt, ...), 0)
end

-- Raises the C API's last error at the user's line when `status` is not 0; returns nothing.
function M.check(status)
  if status ~= 0 then
    M.raise(ffi.string(C.iris_last_error_kind()), "%s", ffi.string(C.iris_last_error()))
  end
end

-- Calls `f`, a C function that may wait for other ranks or the device, with the arguments, and raises
-- its error like check(). It goes through the host's call_waiting, so that while it waits a hang report
-- can show this rank's Lua traceback (code the JIT compiled cannot be looked at); without a host (a
-- plain LuaJIT), it is a plain call.
local host = package.loaded["iris.host"]
local call_waiting = host and host.call_waiting or function(f, ...) return f(...) end

function M.check_waiting(f, ...) M.check(call_waiting(f, ...)) end

-- The kind of an error message raised through this module, or nil.
function M.kind(message) return kind_of_message[message] end

-- The process exit code of an error of `kind` (src/core/errors.def, through the C API).
function M.exit_code_of(kind) return C.iris_exit_code(kind) end

-- The process exit code of an error message raised through this module (1 for any other).
function M.exit_code(message) return M.exit_code_of(kind_of_message[message] or "internal") end

return M
