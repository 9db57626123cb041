-- Where all_reduce's (and reduce's) two_shot loses bandwidth at large sizes (docs/perf.md, "two_shot's tile and grid"):
-- its time per call for several tiles (elements a block holds per step: 8 per thread) and grids, against
-- NCCL (or the backend's reference) in the same run, each configuration's result checked once.
--   mpirun -np N iris-lua docs/experiments/two_shot_sweep.lua [sizes in MiB, default 16,64,256] [iters, default 10]
--     [collectives, default all_reduce; also reduce: its two_shot, the root rank 0]
local reference = require "iris.reference"

local ctx = iris.init { heap_size = "2GiB" }
local sizes = {}
for s in (arg[1] or "16,64,256"):gmatch("[^,]+") do sizes[#sizes + 1] = tonumber(s) end
local iters = tonumber(arg[2] or 10)
local collectives = {}
for c in (arg[3] or "all_reduce"):gmatch("[^,]+") do collectives[#collectives + 1] = c end
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
for _, collective in ipairs(collectives) do
  for _, mib in ipairs(sizes) do
    local n = mib * 1024 * 1024 / 4
    local inp, out = ctx:full(n, ctx.rank + 1), ctx:zeros(n)
    local want = W * (W + 1) / 2
    local function ours(opts)
      if collective == "reduce" then return ctx.ccl.reduce(out, inp, 0, opts) end
      return ctx.ccl.all_reduce(out, inp, opts)
    end
    local nccl = ref.handle and time_ms(function() reference.run(ref, collective, inp, out, n, "float32", "sum", 0) end)
    for _, t in ipairs(tiles) do
      for _, blocks in ipairs(grids) do
        local opts = { variant = "two_shot", block_m = t[1], block_n = t[2], blocks = blocks }
        out:fill(0)
        ours(opts)
        -- every configuration is checked before it is timed (reduce: the root's out alone is written)
        iris.assert_equal(out, (collective == "all_reduce" or ctx.rank == 0) and want or 0)
        local ms = time_ms(function() ours(opts) end)
        rows[#rows + 1] = { collective, mib, t[1] .. "x" .. t[2], blocks, ms, nccl }
      end
    end
    inp:free()
    out:free()
  end
end
if ctx.rank == 0 then
  print(("two_shot, %d ranks, %s, float32; ms per call (slowest rank), x = %s's time / ours"):format(W,
    ctx.device_name, ref.name))
  print(("%-10s %8s %10s %7s %10s %10s %7s %9s"):format("", "MiB", "tile", "blocks", "ours ms", "ref ms", "x",
    "busbw GB/s"))
  for _, r in ipairs(rows) do
    local bytes = r[2] * 1024 * 1024 * (r[1] == "all_reduce" and 2 * (W - 1) / W or 1)
    print(("%-10s %8d %10s %7d %10.3f %10s %7s %9.1f"):format(r[1], r[2], r[3], r[4], r[5],
      r[6] and ("%.3f"):format(r[6]) or "-", r[6] and ("%.2f"):format(r[6] / r[5]) or "-", bytes / (r[5] * 1e-3) / 1e9))
  end
end
reference.close(ref)
