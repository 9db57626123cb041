-- iris.luajit_guard: the guard against the x64 code generation bug of Debian 12's LuaJIT (a compiled
-- next() whose two results are swapped with a 32-bit xchg, which cuts a pointer to 32 bits: SIGSEGV;
-- docs/reliability.md, "check_keys"). Its detector on machine code made here byte by byte, and the
-- guard on the real JIT. The crash itself is tests/cli's bench_ccl_rooted_repeated.
local guard = require "iris.luajit_guard"
local jit = require "jit"

-- A call (E8 rel32) at `address` to `target`, followed by `after`.
local function call_then(address, target, after)
  local rel = target - (address + 5)
  if rel < 0 then rel = rel + 4294967296 end
  local bytes = {}
  for i = 0, 3 do bytes[#bytes + 1] = string.char(math.floor(rel / 256 ^ i) % 256) end
  return "\232" .. table.concat(bytes) .. after
end

iris.test("the bug's mark: a call to a JIT helper, then a 32-bit xchg eax, edx", function()
  local base, helper = 0x55557a82b000, 0x5555556e350f -- a trace's address, lj_vm_next's (a crash's)
  local targets = { [helper] = true }
  local padding = "\144\144\144" -- nops before the call
  local bad = padding .. call_then(base + #padding, helper, "\146\057\248") -- xchg eax, edx; cmp eax, edi
  iris.assert_equal(guard.find_bad_swap(bad, base, targets), #padding + 5)
  -- A fixed LuaJIT swaps the 64-bit registers: REX.W (0x48) before the xchg.
  iris.assert_equal(guard.find_bad_swap(padding .. call_then(base + #padding, helper, "\072\146"), base, targets), nil)
  -- A call to something that is not a JIT helper, an xchg after another instruction, no xchg at all.
  iris.assert_equal(guard.find_bad_swap(padding .. call_then(base + #padding, helper + 16, "\146"), base, targets), nil)
  iris.assert_equal(guard.find_bad_swap("\144\146\144\144\144\144\146", base, targets), nil)
  iris.assert_equal(guard.find_bad_swap("", base, targets), nil)
  -- The mark found after a first 0x92 that is not it (inside a displacement).
  local later = "\146" .. padding .. call_then(base + 1 + #padding, helper, "\146")
  iris.assert_equal(guard.find_bad_swap(later, base, targets), 1 + #padding + 5)
end)

iris.test("the guard watches every trace where the JIT runs on x64", function()
  if jit.arch ~= "x64" or not jit.status() then
    iris.skip("the bug is in LuaJIT's x64 back end (this is " .. jit.arch .. ", JIT " .. tostring(jit.status()) .. ")")
  end
  iris.assert_equal(guard.installed, true)
  -- A compiled pairs() loop and next() at a table's end: the shapes the bug is in. Whatever the
  -- allocation, their results are right (the guard threw away any trace with the mark).
  local run = assert(loadstring([[
    local n, t = ...
    local sum, ends = 0, 0
    for i = 1, n do
      for k, v in pairs(t) do sum = sum + v end
      local a = next(t); local b = next(t, a); local c = next(t, b)
      if next(t, c) == nil then ends = ends + 1 end
    end
    return sum, ends
  ]], "=luajit_guard (compiled loop)"))
  local sum, ends = run(1000, { grid = 1, block = 2, shared = 3 })
  iris.assert_equal(sum, 6000)
  iris.assert_equal(ends, 1000)
  for _, entry in ipairs(guard.caught()) do
    iris.assert_equal(type(entry.trace), "number")
    iris.assert_equal(type(entry.where), "string")
  end
end)
