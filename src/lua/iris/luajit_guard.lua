-- Guards against a LuaJIT code generation bug in the LuaJIT that Debian 12 ships (libluajit-5.1-2
-- 2.1.0~beta3+git20220320): on x64, when the register allocator puts the two results of a compiled
-- next() (IR_NEXT: the 64-bit pointer to the key/value pair, and its index) in each other's return
-- registers, the assembler swaps them with a 32-bit `xchg eax, edx`, which cuts the pointer to its low
-- 32 bits; the trace then reads through that address and the process ends with SIGSEGV. Upstream fixed
-- it on 2022-04-05 ("x64: Fix RETHI/RETLO swap after call.", 5e3c45c4), after Debian's snapshot.
-- Whether it happens depends on the registers a trace's allocation picks, so any compiled next() that
-- reaches the end of a table, or any compiled pairs() loop, may hit it (docs/reliability.md, "check_keys").
--
-- The guard looks at the machine code of every trace as it is compiled, before it ever runs: the bug's
-- mark is a call to one of the JIT's helper functions followed at once by that 32-bit xchg (opcode 0x92
-- without the REX.W prefix a fixed LuaJIT emits). A trace with it is never entered: every trace is
-- flushed (a trace may link to the bad one), so the code runs in the interpreter until it is compiled
-- again. The allocation depends on the trace's whole path, so a recompiled trace is often right; the
-- function a bad trace started in runs in the interpreter from then on (jit.off) once RETRIES traces
-- started in it were bad, so that the same bad trace is not compiled over and over. On a LuaJIT
-- without the bug, or not on x64, the guard finds nothing and changes nothing.
local jit = require "jit"

local M = {}

local CALL_REL32 = 0xE8
local RETRIES = 2

-- The addresses of the JIT's helper functions (jit.util.ircalladdr), as a set.
local helper_addresses
local function helpers()
  if helper_addresses then return helper_addresses end
  local util = require "jit.util"
  helper_addresses = {}
  local index = 0
  while true do
    local address = util.ircalladdr(index)
    if address == nil then break end
    helper_addresses[address] = true
    index = index + 1
  end
  return helper_addresses
end

-- Whether machine code `mcode` (a string, placed at address `address`) has the bug's mark: a call to an
-- address in `targets` (a set) followed at once by a 32-bit `xchg eax, edx`. Returns the offset of the
-- xchg (0-based) or nil.
function M.find_bad_swap(mcode, address, targets)
  local from = 1
  while true do
    local at = mcode:find("\146", from, true) -- 0x92
    if at == nil then return nil end
    if at > 5 and mcode:byte(at - 5) == CALL_REL32 then
      local b0, b1, b2, b3 = mcode:byte(at - 4, at - 1)
      local rel = b0 + b1 * 256 + b2 * 65536 + b3 * 16777216
      if rel >= 2147483648 then rel = rel - 4294967296 end
      -- The call's target: the address after the call (the xchg's own) plus rel32.
      if targets[address + (at - 1) + rel] then return at - 1 end
    end
    from = at + 1
  end
end

local starts = {}   -- trace number -> the function it started in (from its "start" event)
local bad_starts = setmetatable({}, { __mode = "k" }) -- function -> bad traces that started in it
local caught = {}   -- { { trace = n, where = "chunk:line" }, ... }: the traces the guard threw away

local function where(func)
  local info = debug.getinfo(func, "S")
  return info and (info.short_src .. ":" .. tostring(info.linedefined)) or "?"
end

local function on_trace(what, trace, func)
  if what == "start" then
    starts[trace] = func
    return
  end
  if what ~= "stop" then -- "abort", "flush": the start is not needed any more
    if what == "flush" then starts = {} elseif trace then starts[trace] = nil end
    return
  end
  local start = starts[trace] or func
  starts[trace] = nil
  local util = require "jit.util"
  local mcode, address = util.tracemc(trace)
  if mcode == nil or M.find_bad_swap(mcode, address, helpers()) == nil then return end
  caught[#caught + 1] = { trace = trace, where = where(start) }
  if type(start) == "function" then
    bad_starts[start] = (bad_starts[start] or 0) + 1
    if bad_starts[start] >= RETRIES then jit.off(start) end
  end
  jit.flush() -- every trace: one that links to the bad trace would still jump into it
end

-- Installs the guard once per process (x64 only: the bug is in the x64 back end).
function M.install()
  if M.installed or not jit.status() or jit.arch ~= "x64" then return M.installed or false end
  local ok = pcall(require, "jit.util")
  if not ok then return false end
  jit.attach(on_trace, "trace")
  M.installed = true
  return true
end

-- The traces the guard threw away so far (a copy): { { trace = n, where = "chunk:line" }, ... }.
function M.caught()
  local list = {}
  for i, entry in ipairs(caught) do list[i] = { trace = entry.trace, where = entry.where } end
  return list
end

return M
