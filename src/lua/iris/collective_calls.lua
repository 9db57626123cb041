-- Which ctx.ccl and ctx.ops call a rank launched, by its number in the collectives' call protocol, and
-- from which script line (issue 27). When the device reports that the ranks called a collective
-- differently (or that one never called it), the report carries each side's call number
-- (iris_collective_report); this module turns it into "ranks called ctx.ccl.all_reduce differently",
-- names the script line of this rank's call, and says so when that call was made inside a pairs()
-- loop, whose order differs between processes.
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local M = {}

local KEEP = 1024      -- calls remembered per context: a mismatch is found among the calls still in flight
local MAX_FRAMES = 3   -- the script's frames remembered per call (the innermost), for the pairs() hint

-- "ctx.ccl.all_reduce" for the kernel "ccl_all_reduce", "ctx.ops.matmul_all_reduce" for
-- "ops_matmul_all_reduce_float16" (ops kernels come one per element type).
local function call_name(kernel_name)
  local ccl = kernel_name:match("^ccl_ll_(.+)$") or kernel_name:match("^ccl_(.+)$")
  if ccl then return "ctx.ccl." .. ccl end
  local op = kernel_name:match("^ops_(.+)_[%w]+$")
  if op then return "ctx.ops." .. op end
  return kernel_name
end

local script_frames = package.loaded["iris.host"].script_frames

-- Remembers call number `calls.seq` (ccl.calls(ctx), which has just counted it) of `kernel`, made from
-- the script's frames on the stack now. It runs at every collective call: the ring's entries are
-- reused, the frames kept flat (function, line), the names and files found only for a report.
function M.record(calls, kernel)
  local log = calls.log
  if not log then
    log = {}
    calls.log = log
  end
  local slot = calls.seq % KEEP
  local entry = log[slot]
  if not entry then
    entry = {}
    log[slot] = entry
  end
  entry.seq, entry.kernel = calls.seq, kernel.name
  -- level 3: record's caller's caller (ccl.lua's launch, then the collective's function), as getinfo counts
  entry.n = 2 * script_frames(entry, 3, MAX_FRAMES)
end

-- The call's frames as { fn, line, where = "s.lua:12" }, innermost first.
local function frames_of(entry)
  local frames = {}
  for i = 1, entry.n, 2 do
    local info = debug.getinfo(entry[i], "S")
    frames[#frames + 1] = { fn = entry[i], line = entry[i + 1], where = info.short_src .. ":" .. entry[i + 1] }
  end
  return frames
end

-- ---- pairs() loops ------------------------------------------------------------------------------------
-- LuaJIT compiles `for k, v in pairs(t) do ... end` to ISNEXT, the body, ITERN and ITERL (its parser
-- predicts `next` from the name pairs; a loop whose iterator turns out to be another function is
-- rewritten to ITERC at run time). A line inside the body of such a loop, in a function's bytecode, is
-- inside a loop over a table's keys in hash order.

local vmdef_loaded, vmdef = pcall(require, "jit.vmdef")
local jutil_loaded, jutil = pcall(require, "jit.util")

local function opcode_name(ins)
  local op = bit.band(ins, 0xff)
  return vmdef.bcnames:sub(op * 6 + 1, op * 6 + 6):gsub(" +$", "")
end

-- The line of `fn`'s pairs() loop holding `line`, or nil.
local function pairs_loop_line(fn, line)
  if not (vmdef_loaded and jutil_loaded) or type(fn) ~= "function" then return nil end
  local info = jutil.funcinfo(fn)
  if not info or not info.bytecodes then return nil end
  for pc = 1, info.bytecodes - 1 do
    local ins = jutil.funcbc(fn, pc)
    if ins and opcode_name(ins) == "ITERL" then
      local previous = jutil.funcbc(fn, pc - 1)
      if previous and opcode_name(previous) == "ITERN" then
        local body = pc + 1 + bit.rshift(ins, 16) - 0x8000 -- ITERL jumps back to the body's start
        for at = body, pc - 2 do
          if jutil.funcinfo(fn, at).currentline == line then
            return jutil.funcinfo(fn, pc - 1).currentline -- the loop's `for` line is where ITERN sits
          end
        end
      end
    end
  end
  return nil
end

-- "s.lua:9" when one of the call's frames was in a pairs() loop at the time, else nil.
local function in_pairs_loop(entry)
  for _, frame in ipairs(frames_of(entry)) do
    local loop = pairs_loop_line(frame.fn, frame.line)
    if loop then return frame.where:gsub(":%d+$", ":" .. loop) end
  end
  return nil
end

-- ---- explaining a report --------------------------------------------------------------------------------

local text_out, peer_out = ffi.new("const char*[1]"), ffi.new("int[1]")
local mine_out, theirs_out = ffi.new("uint64_t[1]"), ffi.new("uint64_t[1]")

-- The call this rank made as number `seq` of `calls`, or nil when it is no longer remembered. A call
-- that repeated the one before it of its collective with the same arguments (iris.ccl's fast path,
-- which records nothing: it is the loop's path) is that one's: the latest call recorded before it, and
-- `true` as the second value.
local function call_of(calls, seq)
  local log = calls and calls.log
  if not log then return nil end
  local entry = log[seq % KEEP]
  if entry and entry.seq == seq then return entry, false end
  local latest
  for _, e in pairs(log) do
    if e.seq < seq and (not latest or e.seq > latest.seq) then latest = e end
  end
  return latest, latest ~= nil
end

-- For a device fault whose report is the collectives' call protocol's: the message to raise instead of
-- the fault's and the position to put before it ("s.lua:12: "), or nil. `calls`: ccl.calls(ctx).
function M.explain(calls)
  if C.iris_collective_report(text_out, peer_out, mine_out, theirs_out) ~= 1 then return nil end
  local text, me, peer = ffi.string(text_out[0]), C.iris_rank(), peer_out[0]
  local seq = tonumber(mine_out[0])
  local mine, repeated = call_of(calls, seq)
  -- The device's words: "ctx.ccl.all_reduce: rank 0 called it with ..., rank 1 with ..." (a mismatch),
  -- "ctx.ccl: rank 0 called all_reduce with ..." (different collectives), or "ctx.ccl.all_reduce on
  -- rank 0: rank 1 did not call it within 10 s (...)".
  local name, sides = text:match("^(ctx%.[%w_.]*[%w_]): (rank %d+ called .*)$")
  if not name then name, sides = text:match("^(ctx%.ccl and ctx%.ops): (rank %d+ called .*)$") end
  local message = name and ("ranks called %s differently: %s."):format(name, sides) or (text .. ".")
  local first = mine and frames_of(mine)[1]
  local where = first and first.where
  if mine and repeated then
    -- iris.ccl's fast path records no line (it is a loop's path, and looking at the stack would keep
    -- LuaJIT from compiling the loop): the error stays at the line where the fault surfaced, and the
    -- message says which call this one repeated.
    message = message .. (" Rank %d's call was its collective call %d, a repeat with the same arguments of %s "
      .. "(its call %d at %s)"):format(me, seq, call_name(mine.kernel), mine.seq, where or "a line that is not known")
    message = message .. (name and ("; rank %d names its own call in its message."):format(peer) or ".")
    where = nil
  elseif mine then
    message = message .. (" Rank %d made this call (%s, its collective call %d) at %s"):format(me,
      call_name(mine.kernel), seq, where or "a line that is not known")
    message = message .. (name and ("; rank %d names its own line in its message."):format(peer) or ".")
  end
  local loop = mine and in_pairs_loop(mine)
  if loop then
    message = message .. (" It was made inside the pairs() loop at %s: pairs() visits a table's keys in an "
      .. "order that differs between processes (LuaJIT seeds its string hash per process), so ranks that launch "
      .. "collectives while iterating pairs() call them in different orders; iterate over a sorted list of the "
      .. "keys instead."):format(loop)
  elseif name then
    message = message .. " Every rank must make the same collective calls, in the same order, with the same "
      .. "arguments."
  end
  return message, where and (where .. ": ") or nil
end

return M
