-- The host's issue of a call while LuaJIT compiles its path (docs/perf.md, "LuaJIT's trace limits"):
-- per-call wall time of ctx.ops.matmul (128 x 128 x 128 bfloat16) and ctx.ccl.all_reduce (16 KiB of
-- float32), 3000 calls each on fresh operands every 500, no wait between calls (the device keeps up):
-- the first 300 calls' total (what compiling the path costs), then the median, 99th percentile and
-- slowest call of the rest, and the calls over 100 us. Run it as it is and with larger trace limits,
--   iris-lua docs/experiments/jit_limits.lua
--   iris-lua -Omaxrecord=16000,maxirconst=2000,maxsnap=2000 docs/experiments/jit_limits.lua
local ffi = require "ffi"
local ctx = iris.init { heap_size = "256MiB" }
local function now_us() return ffi.C.iris_wall_time() * 1e6 end

local function measure(name, make, call)
  local times, operands = {}, nil
  for i = 1, 3000 do
    if (i - 1) % 500 == 0 then
      if operands then for _, t in pairs(operands) do t:free() end end
      ctx:synchronize()
      operands = make()
    end
    local t0 = now_us()
    call(operands)
    times[i] = now_us() - t0
  end
  ctx:synchronize()
  local first = 0
  for i = 1, 300 do first = first + times[i] end
  local rest = {}
  for i = 301, #times do rest[#rest + 1] = times[i] end
  table.sort(rest)
  local over = 0
  for _, t in ipairs(rest) do if t > 100 then over = over + 1 end end
  print(("%-22s first 300 calls %8.0f us | then median %6.1f us, p99 %7.1f, slowest %7.1f, %d over 100 us"):format(name,
    first, rest[math.floor(#rest / 2)], rest[math.floor(#rest * 0.99)], rest[#rest], over))
end

measure("ctx.ops.matmul", function()
  return { a = ctx:ones({ 128, 128 }, "bfloat16"), b = ctx:ones({ 128, 128 }, "bfloat16"), c = ctx:zeros({ 128, 128 }, "bfloat16") }
end, function(o) ctx.ops.matmul(o.c, o.a, o.b) end)
measure("ctx.ccl.all_reduce", function() return { x = ctx:ones(4096), y = ctx:zeros(4096) } end,
  function(o) ctx.ccl.all_reduce(o.y, o.x) end)
