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
local divergence_of_message = {}
local remembered = 0

local function remember(message, kind, divergence)
  remembered = remembered + 1
  if remembered > 1000 then -- bounded: only recent errors can still be on their way to the top
    kind_of_message, divergence_of_message = {}, {}
    remembered = 1
  end
  kind_of_message[message] = kind
  divergence_of_message[message] = divergence
end

-- Which frames are the user's is one rule, the host's (src/host/user_frames.hpp): hang reports, read
-- where no Lua may run, use it too.
local host = package.loaded["iris.host"]

local function is_iris_frame(info) return info.what == "C" or host.is_iris_chunk(info.source) end
M.is_iris_frame = is_iris_frame -- (debug.getinfo's "S" fields: whether a frame is iris's own or C)

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

-- Raises without the user's position: for a mistake that is in no line of the script (a command line).
function M.raise_plain(kind, fmt, ...)
  local message = select("#", ...) > 0 and fmt:format(...) or fmt
  remember(message, kind)
  error(message, 0)
end

local mismatch_op, mismatch_peer, mismatch_peer_op = ffi.new("const char*[1]"), ffi.new("int[1]"),
  ffi.new("const char*[1]")

-- A device fault is sticky (docs/kernels.md): after the first, every later call that touches the device
-- fails with the same report. Raised as it is, at the later call's line, it read as that call's own
-- fault (a correct all_reduce "reported" the mismatch of one that came before and was caught): the
-- first one's report and line are kept, and a repeat says what it is.
local first_fault = nil -- { raw = the C side's message, report = as raised, where = "script.lua:4" }

-- The later call's text when `raw` (the C side's message) repeats the first fault's, else nil.
local function repeated_fault_text(raw)
  if first_fault == nil or raw ~= first_fault.raw then return nil end
  return ("the device faulted before, at %s, and runs nothing after a fault (a device fault cannot be caught and "
    .. "continued from: the job must end); that fault: %s"):format(first_fault.where, first_fault.report)
end

-- Raises the C API's last error at the user's line when `status` is not 0; returns nothing. A
-- collective mismatch's facts are remembered with it (M.divergence).
-- Functions that may word a device fault better (iris.ccl's: the collectives' reports): each returns a
-- message to raise instead of the C API's and the position to put before it, or nil.
local fault_explainers = {}
function M.on_device_fault(explain) fault_explainers[#fault_explainers + 1] = explain end

function M.check(status)
  if status == 0 then return end
  local where = M.where()
  local text = ffi.string(C.iris_last_error())
  if ffi.string(C.iris_last_error_kind()) == "device_fault" then
    local repeated = repeated_fault_text(text)
    if repeated then
      text = repeated
    else
      local raw = text
      for _, explain in ipairs(fault_explainers) do
        local better, position = explain()
        if better then
          text, where = better, position or where
          break
        end
      end
      if first_fault == nil then
        first_fault = { raw = raw, report = text, where = where ~= "" and where:gsub(": $", "") or "an earlier call" }
      end
    end
  end
  local message = where .. text
  local divergence = nil
  if C.iris_last_divergence(mismatch_op, mismatch_peer, mismatch_peer_op) == 1 then
    divergence = { where = where, op = ffi.string(mismatch_op[0]), peer = mismatch_peer[0],
                   peer_op = ffi.string(mismatch_peer_op[0]) }
  end
  remember(message, ffi.string(C.iris_last_error_kind()), divergence)
  error(message, 0)
end

-- Calls `f`, a C function that may wait for other ranks or the device, with the arguments, and raises
-- its error like check(). It goes through the host's call_waiting, so that while it waits a hang report
-- can show this rank's Lua traceback (code the JIT compiled cannot be looked at).
local call_waiting = host.call_waiting

function M.check_waiting(f, ...) M.check(call_waiting(f, ...)) end

-- Tables of options -----------------------------------------------------------------------------

-- Edits (insert, delete, replace a character) from a to b: how close a mistyped name is.
local function distance(a, b)
  local previous = {}
  for j = 0, #b do previous[j] = j end
  for i = 1, #a do
    local current = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      current[j] = math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    end
    previous = current
  end
  return previous[#b]
end

-- The known name nearest a mistyped one, when it is near enough to be what was meant (else nil).
function M.nearest(name, names)
  if type(name) ~= "string" then return nil end
  local best, best_distance = nil, math.huge
  for _, known in ipairs(names) do
    local d = distance(name, known)
    if d < best_distance then best, best_distance = known, d end
  end
  if best_distance <= math.min(2, #name - 1) then return best end
end

local key_sets = setmetatable({}, { __mode = "k" }) -- names list -> set of its names

-- A value as every "..., got X" of a bad argument names it, one wording for all of iris: "a float32
-- tensor" ("an int32 tensor"), 'text' (cut at 40 characters), number 1.5, boolean true, nil, cdata 5LL
-- (64-bit integers), and "a table" (a function, other cdata) for the rest.
local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")
function M.describe(v)
  local tensors = package.loaded["iris.tensor_core"] -- (loaded wherever a tensor exists; no require: it needs this module)
  if tensors and tensors.is_tensor(v) then
    return (v.dtype:sub(1, 1) == "i" and "an %s tensor" or "a %s tensor"):format(v.dtype)
  end
  local kind = type(v)
  if kind == "string" then return ("'%s'"):format(#v > 40 and v:sub(1, 40) .. "..." or v) end
  if kind == "number" or kind == "boolean" then return ("%s %s"):format(kind, tostring(v)) end
  if kind == "cdata" and (ffi.istype(int64_t, v) or ffi.istype(uint64_t, v)) then return "cdata " .. tostring(v) end
  if kind == "nil" then return "nil" end
  return "a " .. kind
end

-- Raises when `tbl` has a key that is not one of `names` (a list, in the order the message gives
-- them): "k:launch: unknown cfg key 'blocks' (did you mean 'block'? cfg keys: grid, block, shared)".
-- `what` names the call, `noun` what a key is ("option" by default). Cheap enough for every launch.
function M.check_keys(tbl, names, what, noun)
  local first = next(tbl)
  if first == nil then return end -- (no loop on the common path: see iris.ccl's VARIANT_OK)
  local set = key_sets[names]
  if not set then
    set = {}
    for _, name in ipairs(names) do set[name] = true end
    key_sets[names] = set
  end
  -- Up to three keys without a loop: a pairs() loop here ran uncompiled on every collective call
  -- (18 % of ctx.ccl's policy, `iris-lua -jp`), and tables of options are short.
  if set[first] then
    local second = next(tbl, first)
    if second == nil then return end
    if set[second] then
      local third = next(tbl, second)
      if third == nil or (set[third] and next(tbl, third) == nil) then return end
    end
  end
  for key in pairs(tbl) do
    if not set[key] then
      noun = noun or "option"
      local near = M.nearest(key, names)
      M.raise("invalid_argument", "%s: unknown %s '%s' (%s%ss: %s)", what, noun, tostring(key),
        near and ("did you mean '%s'? "):format(near) or "", noun, table.concat(names, ", "))
    end
  end
end

-- Tracebacks -----------------------------------------------------------------------------------

-- The traceback printed under an error `message`: "stack traceback:\n\t..." with the frames from
-- `level` (debug.getinfo's count from the caller of this function: 1 is the caller), iris's frames left
-- out; "" for a usage error (a bad command line is not a bug in the script) or when no frame remains.
-- The host prints it for scripts, the REPL for chunks, the test runner for cases.
-- `deliberate`: the error is one iris meant to raise although it did not raise it through this module
-- (a timeout, Ctrl-C). `outermost`: the function whose frame is the last one shown (a test case).
function M.traceback(message, level, deliberate, outermost)
  local kind = kind_of_message[message]
  if kind == "usage" then return "" end
  deliberate = deliberate or kind ~= nil
    or (type(message) == "string" and message:find("interrupted!", 1, true) ~= nil)
  local frames = host.user_frames((level or 1) + 1, deliberate, outermost)
  if #frames == 0 then return "" end
  local lines = { "stack traceback:" }
  -- As luaL_traceback: the innermost 12 and the outermost 10 of a deep stack.
  for i, line in ipairs(frames) do
    if i <= 12 or i > #frames - 10 then
      lines[#lines + 1] = "\t" .. line
    elseif i == 13 then
      lines[#lines + 1] = "\t..."
    end
  end
  return table.concat(lines, "\n")
end

-- The kind of an error message raised through this module, or nil.
function M.kind(message) return kind_of_message[message] end

-- The facts of a collective mismatch raised through M.check, or nil: { op = the collective this rank
-- was in, peer = the rank in another one, peer_op = that one, where = the position the message starts
-- with ("script.lua:12: ", or "") }.
function M.divergence(message) return divergence_of_message[message] end

-- The process exit code of an error of `kind` (src/core/errors.def, through the C API).
function M.exit_code_of(kind) return C.iris_exit_code(kind) end

-- The process exit code of an error message raised through this module (1 for any other).
function M.exit_code(message) return M.exit_code_of(kind_of_message[message] or "internal") end

return M
