-- Where all_reduce's two_shot loses bandwidth at large sizes (docs/perf.md, "two_shot's tile and grid"):
-- its time per call for several tiles (elements a block holds per step: 8 per thread) and grids, against
-- NCCL (or the backend's reference) in the same run, each configuration's result checked once.
--   mpirun -np N iris-lua docs/experiments/two_shot_sweep.lua [sizes in MiB, default 16,64,256] [iters, default 10]
local reference = require "iris.reference"

local ctx = iris.init { heap_size = "2GiB" }
local sizes = {}
for s in (arg[1] or "16,64,256"):gmatch("[^,]+") do sizes[#sizes + 1] = tonumber(s) end
local iters = tonumber(arg[2] or 10)
local W = ctx.world_size
local slowest = function(v) return require("iris.broadcast").slowest(v, "two_shot_sweep") end
-- tiles (block_m x block_n: a contiguous message is one row, tiles of block_m * block_n elements) and grids
local tiles = { { 16, 64 }, { 32, 64 } } -- (2048 elements a block: 256 threads, the most its registers allow on an H200)
local grids = { 66, 132, 264, 512 }
local ref = reference.open(ctx)

local function time_ms(fn)
  ctx:barrier()
  return slowest(iris.bench(fn, { warmup = 2, iters = iters }).median_ms)
end

local rows = {}
for _, mib in ipairs(sizes) do
  local n = mib * 1024 * 1024 / 4
  local inp, out = ctx:full(n, ctx.rank + 1), ctx:zeros(n)
  local want = W * (W + 1) / 2
  local nccl = ref.handle and time_ms(function() reference.run(ref, "all_reduce", inp, out, n, "float32", "sum") end)
  for _, t in ipairs(tiles) do
    for _, blocks in ipairs(grids) do
      local opts = { variant = "two_shot", block_m = t[1], block_n = t[2], blocks = blocks }
      out:fill(0)
      ctx.ccl.all_reduce(out, inp, opts)
      iris.assert_equal(out, want) -- every configuration is checked before it is timed
      local ms = time_ms(function() ctx.ccl.all_reduce(out, inp, opts) end)
      rows[#rows + 1] = { mib, t[1] .. "x" .. t[2], blocks, ms, nccl }
    end
  end
  inp:free()
  out:free()
end
if ctx.rank == 0 then
  print(("all_reduce two_shot, %d ranks, %s, float32; ms per call (slowest rank), x = %s's time / ours"):format(W,
    ctx.device_name, ref.name))
  print(("%8s %10s %7s %10s %10s %7s %9s"):format("MiB", "tile", "blocks", "ours ms", "ref ms", "x", "busbw GB/s"))
  for _, r in ipairs(rows) do
    local bus = r[1] * 1024 * 1024 * 2 * (W - 1) / W / (r[4] * 1e-3) / 1e9
    print(("%8d %10s %7d %10.3f %10s %7s %9.1f"):format(r[1], r[2], r[3], r[4], r[5] and ("%.3f"):format(r[5]) or "-",
      r[5] and ("%.2f"):format(r[5] / r[4]) or "-", bus))
  end
end
reference.close(ref)
