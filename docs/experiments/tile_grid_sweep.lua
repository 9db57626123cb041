-- Where a tile variant loses bandwidth at large sizes (docs/perf.md, "two_shot's tile and grid", "relay's
-- tile and grid"): its time per call for several tiles (elements a block holds per step: 8 per thread)
-- and grids, against NCCL (or the backend's reference) in the same run, each configuration's result
-- checked once. The variants: all_reduce and reduce two_shot (reduce's root: rank 0), broadcast relay
-- (root 0).
--   mpirun -np N iris-lua docs/experiments/tile_grid_sweep.lua [sizes in MiB, default 16,64,256]
--     [iters, default 10] [collectives, default all_reduce] [tiles, default 16x64,32x64]
--     [grids, default 66,132,264,512]
-- (two_shot's registers allow 256 threads a block on an H200: tiles of at most 2048 elements.)
local reference = require "iris.reference"

local ctx = iris.init { heap_size = "2GiB" }
local function list(text, default, convert)
  local out = {}
  for item in (text or default):gmatch("[^,]+") do out[#out + 1] = convert(item) end
  return out
end
local sizes = list(arg[1], "16,64,256", tonumber)
local iters = tonumber(arg[2] or 10)
local collectives = list(arg[3], "all_reduce", tostring)
local tiles = list(arg[4], "16x64,32x64", function(t)
  local m, n = t:match("^(%d+)x(%d+)$")
  return { tonumber(m), tonumber(n) }
end)
local grids = list(arg[5], "66,132,264,512", tonumber)
local VARIANT = { all_reduce = "two_shot", reduce = "two_shot", broadcast = "relay" }
local W = ctx.world_size
local slowest = function(v) return require("iris.broadcast").slowest(v, "tile_grid_sweep") end
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
    -- what out must hold after one call (reduce: the root's alone is written; broadcast: in place, root 0's)
    local want = (collective == "broadcast" and 1) or ((collective == "all_reduce" or ctx.rank == 0) and W * (W + 1) / 2)
      or 0
    local function ours(opts)
      if collective == "reduce" then return ctx.ccl.reduce(out, inp, 0, opts) end
      if collective == "broadcast" then return ctx.ccl.broadcast(out, 0, opts) end
      return ctx.ccl.all_reduce(out, inp, opts)
    end
    local nccl = ref.handle and time_ms(function() reference.run(ref, collective, inp, out, n, "float32", "sum", 0) end)
    for _, t in ipairs(tiles) do
      for _, blocks in ipairs(grids) do
        local opts = { variant = VARIANT[collective], block_m = t[1], block_n = t[2], blocks = blocks }
        if collective == "broadcast" then out:fill(ctx.rank + 1) else out:fill(0) end
        ours(opts)
        iris.assert_equal(out, want) -- every configuration is checked before it is timed
        local ms = time_ms(function() ours(opts) end)
        rows[#rows + 1] = { collective, mib, t[1] .. "x" .. t[2], blocks, ms, nccl }
      end
    end
    inp:free()
    out:free()
  end
end
if ctx.rank == 0 then
  print(("%d ranks, %s, float32; ms per call (slowest rank), x = %s's time / ours"):format(W, ctx.device_name,
    ref.name))
  print(("%-10s %8s %10s %7s %10s %10s %7s %9s"):format("", "MiB", "tile", "blocks", "ours ms", "ref ms", "x",
    "algbw GB/s"))
  for _, r in ipairs(rows) do
    print(("%-10s %8d %10s %7d %10.3f %10s %7s %9.1f"):format(r[1], r[2], r[3], r[4], r[5],
      r[6] and ("%.3f"):format(r[6]) or "-", r[6] and ("%.2f"):format(r[6] / r[5]) or "-",
      r[2] * 1024 * 1024 / (r[5] * 1e-3) / 1e9))
  end
end
reference.close(ref)
