-- What t:add_ moves (docs/perf.md, "The element-wise kernels"): at one rank, t:add_(x) of one run of
-- elements (the 16-byte steps), the same on a view one element in (the general loop) and t:add_(scalar),
-- against the device's own copy of the same bytes (t:copy_(x): the copy engine, the memory's pace), each
-- timed by iris.bench on the device. GB/s counts every byte read and written (add_ of a tensor reads two
-- and writes one; of a scalar reads one and writes one; a copy reads one and writes one).
--   iris-lua docs/experiments/elementwise_bench.lua [MiB per tensor, default 128 (cpu: 8)]
local ctx = iris.init { heap_size = "1GiB" }
local mib = tonumber(arg[1] or (ctx.backend == "cpu" and 8 or 128))
local iters = ctx.backend == "cpu" and 3 or 20
local function gbs(bytes, r) return bytes / (r.median_ms * 1e-3) / 1e9 end

print(("%s, %d MiB a tensor, median of %d calls"):format(ctx.device_name, mib, iters))
print(("%-10s %14s %14s %14s %14s"):format("dtype", "add_(x) GB/s", "unaligned", "add_(2) GB/s", "copy_ GB/s"))
for _, dtype in ipairs { "bfloat16", "float32", "int8" } do
  local bytes = mib * 1024 * 1024
  local n = bytes / ctx:empty(1, dtype):element_size()
  local t, x = ctx:ones(n, dtype), ctx:ones(n, dtype)
  local opts = { warmup = 3, iters = iters }
  local add = iris.bench(function() t:add_(x) end, opts)
  local tv, xv = t:narrow(1, 2, n - 1), x:narrow(1, 2, n - 1)
  local unaligned = iris.bench(function() tv:add_(xv) end, opts)
  local scalar = iris.bench(function() t:add_(2) end, opts)
  local copy = iris.bench(function() t:copy_(x) end, opts)
  print(("%-10s %14.1f %14.1f %14.1f %14.1f"):format(dtype, gbs(3 * bytes, add), gbs(3 * bytes, unaligned),
    gbs(2 * bytes, scalar), gbs(2 * bytes, copy)))
  t:free()
  x:free()
end
