-- ops_example: what Iris's examples 07-16 as scripts (scripts/07_*.lua ... 16_*.lua, docs/ops.md) share:
-- their options (Iris's: sizes, dtype, blocks, --validate), the operands, timing the fused way next to
-- the bulk-synchronous one (a plain GEMM, then the collective), the validation of one against the other,
-- and the printed and written results. A script describes its example and calls run:
--   package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
--   require("ops_example").run { name = ..., about = ..., ... }
local M = {}

-- Iris's defaults (8192 x 4608 x 36864, bf16 on its benchmarks) on GPUs; tiny ones on the cpu backend.
local SIZES = { cpu = { m = 96, n = 160, k = 64 }, gpu = { m = 8192, n = 4608, k = 36864 } }
local TOLERANCE = { float16 = 4e-3, bfloat16 = 2e-2, float32 = 1e-4 }
local ELEMENT_SIZE = { float16 = 2, bfloat16 = 2, float32 = 4 }

-- The example's description `ex`:
--   name, about      the script's name and what it shows (one line each)
--   variants         the variants --variant takes (the first is the default), or nil
--   comm_blocks      whether the example has blocks that only communicate (--comm_blocks)
--   shapes(o, W)     the operands' shapes {a =, b =, c =, bulk =} (bulk: the plain GEMM's result, nil for
--                    none), after checking the sizes divide as the example needs (o.m, o.n, o.k: Iris's
--                    global M, N, K)
--   fused(ctx, t, o) the fused call, writing t.c; bulk(ctx, t, o) the bulk-synchronous one, writing
--                    t.expected; both from t.a and t.b
--   flops(o)         floating-point operations of one call (default 2 M N K); bytes(o, W) instead for an
--                    example without a GEMM (reported as GB/s)
--   what             the fused call (named in the first row), or fused_name: the first row's whole name
--   bulk_name        the second row's name (what the first is validated against)
--   base             a table of the fields above shared with other examples (M.ALL_SCATTER, M.ALL_REDUCE):
--                    those the description leaves out come from it
function M.run(ex)
  for key, value in pairs(ex.base or {}) do
    if ex[key] == nil then ex[key] = value end
  end
  local declared = {
    { "m", SIZES.cpu.m, "rows of A and C (Iris's -m)", gpu = SIZES.gpu.m, min = 1 },
    { "n", SIZES.cpu.n, "columns of B and C (Iris's -n)", gpu = SIZES.gpu.n, min = 1 },
    { "k", SIZES.cpu.k, "the inner dimension, over every rank (Iris's -k)", gpu = SIZES.gpu.k, min = 1 },
    { "dtype", "float16", "element type of A, B and C (float32 accumulation)", type = "choice",
      choices = { "float16", "bfloat16", "float32" }, gpu = "bfloat16" },
    { "blocks", 0, "GEMM blocks (Iris's gemm_sms; 0: ctx.ops's default, what this rank's share of the device holds at once)", min = 0 },
    { "iters", 3, "timed runs; the median is reported", gpu = 10, min = 1 },
    { "warmup", 1, "untimed runs before them", gpu = 2, min = 0 },
    { "validate", true, "check every element of the result against the bulk-synchronous one", type = "boolean" },
  }
  if ex.flops == nil and ex.bytes then table.remove(declared, 3) end -- no GEMM, no k
  if ex.variants then
    table.insert(declared, 5, { "variant", ex.variants[1], "how the tiles are communicated", type = "choice",
      choices = ex.variants })
  end
  if ex.comm_blocks then
    table.insert(declared, 6, { "comm_blocks", 1, "blocks that only communicate (Iris's comm_sms)", gpu = 16, min = 1 })
  end
  local o = iris.options(arg, { name = ex.name, about = ex.about, options = declared,
    usage = ("mpirun -np N iris-lua %s [options]"):format(arg and arg[0] or ex.name .. ".lua") })
  if not o then return end -- --help
  local W = iris.world_size()
  local shapes = ex.shapes(o, W)

  local elements = 0
  for _, key in ipairs { "a", "b", "c", "bulk" } do
    if shapes[key] then elements = elements + 2 * shapes[key][1] * shapes[key][2] end -- result and its twin
  end
  local ctx = iris.init { heap_size = require("iris.ccl").heap_for(elements * ELEMENT_SIZE[o.dtype] + 64 * 1024 * 1024) }
  -- Small whole numbers: every product and sum is exact in float32 accumulation, and the two ways
  -- differ at most by the rounding of their sums into the dtype.
  local t = {
    a = ctx:randint(-2, 3, shapes.a, o.dtype, 1000), -- each rank draws its own numbers
    b = shapes.b and ctx:randint(-2, 3, shapes.b, o.dtype, 2000),
    c = ctx:zeros(shapes.c, o.dtype),
    expected = ctx:zeros(shapes.c, o.dtype),
    bulk = shapes.bulk and ctx:zeros(shapes.bulk, o.dtype),
  }
  o.options = { blocks = o.blocks > 0 and o.blocks or nil, comm_blocks = o.comm_blocks, variant = o.variant }

  local function timed(fn)
    ctx:barrier()
    local result = iris.bench(fn, { warmup = o.warmup, iters = o.iters })
    ctx:synchronize()
    ctx:barrier()
    return ctx:broadcast(result.median_ms, 0)
  end
  local fused_ms = timed(function() ex.fused(ctx, t, o) end)
  local bulk_ms = timed(function() ex.bulk(ctx, t, o) end)
  local validated
  if o.validate then
    -- The last calls of each side wrote t.c and t.expected; run them once more, the fused one last,
    -- so that t.c is not what an earlier call left.
    t.c:fill(0)
    ex.fused(ctx, t, o)
    ctx:synchronize()
    local ok, why = pcall(iris.assert_allclose, t.c, t.expected, { rtol = TOLERANCE[o.dtype], atol = 0.5 })
    local failed = ctx:full(1, ok and 0 or 1, "int32")
    ctx.ccl.all_reduce(failed, failed) -- every rank learns how many ranks failed
    if not ok then error(("%s: validation failed on rank %d: %s"):format(ex.name, ctx.rank, why), 0) end
    if failed:item() > 0 then error(("%s: validation failed on %d other rank%s"):format(ex.name, failed:item(),
      failed:item() == 1 and "" or "s"), 0) end
    validated = true
  end

  local rate, unit
  if ex.bytes then
    rate, unit = function(ms) return ex.bytes(o, W) * ELEMENT_SIZE[o.dtype] / (ms * 1e6) end, "GB/s"
  else
    local flops = ex.flops and ex.flops(o, W) or 2 * o.m * o.n * o.k
    rate, unit = function(ms) return flops / (ms * 1e9) end, "TFLOP/s"
  end
  if ctx.rank == 0 then
    print(("%s: %s"):format(ex.name, ex.about))
    local size = ex.bytes and ("%d x %d"):format(o.m, o.n) or ("M x N x K %d x %d x %d"):format(o.m, o.n, o.k)
    print(("  %s %s, %d rank%s, %s backend (%s)%s; median of %d runs after %d warm-up"):format(size, o.dtype, W,
      W == 1 and "" or "s", ctx.backend, ctx.device_name or "?", o.variant and ", variant " .. o.variant or "",
      o.iters, o.warmup))
    local first = ex.fused_name or "fused: " .. ex.what
    print(("  %-60s %10.3f ms %10.4g %s"):format(first, fused_ms, rate(fused_ms), unit))
    print(("  %-60s %10.3f ms %10.4g %s"):format(ex.bulk_name, bulk_ms, rate(bulk_ms), unit))
    print(("  speed-up of the first over the second: %.2fx"):format(bulk_ms / fused_ms))
    print(validated and "validated: every element against " .. ex.bulk_name
      or "not validated (--no-validate)")
  end
  iris.options.write(o, { { way = "fused", ms = fused_ms, rate = rate(fused_ms), unit = unit },
    { way = "bulk", ms = bulk_ms, rate = rate(bulk_ms), unit = unit } }, { columns = { "way", "ms", "rate", "unit" },
    setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, m = o.m, n = o.n, k = o.k,
      dtype = o.dtype, variant = o.variant, validated = validated } })
end

-- Examples 07, 10, 11 and 12: each rank computes the columns of C of its block of B's columns (A whole),
-- and every rank gets all of C; the bulk-synchronous way is our GEMM, then ctx.ccl.all_gather along dim 2.
M.ALL_SCATTER = {
  shapes = function(o, W)
    local n = M.divides(o.n, W, "--n")
    return { a = { o.m, o.k }, b = { o.k, n }, c = { o.m, o.n }, bulk = { o.m, n } }
  end,
  bulk_name = "ctx.ops.matmul, then ctx.ccl.all_gather (dim 2)",
  bulk = function(ctx, t, o)
    ctx.ops.matmul(t.bulk, t.a, t.b, { blocks = o.options.blocks })
    ctx.ccl.all_gather(t.expected, t.bulk, { dim = 2 })
  end,
}

-- Examples 10 and 11: GEMM blocks flag finished tiles, --comm_blocks blocks send them to every rank.
function M.all_scatter_specialized(ctx, t, o)
  ctx.ops.matmul_all_gather(t.c, t.a, t.b, { dim = 2, variant = "specialized", blocks = o.options.blocks,
    comm_blocks = o.comm_blocks })
end

-- Examples 08, 09 and 15: each rank holds a slice of K (its columns of A, its rows of B), C is the sum of
-- the ranks' products; the bulk-synchronous way is our GEMM, then ctx.ccl.all_reduce.
M.ALL_REDUCE = {
  what = "ctx.ops.matmul_all_reduce",
  shapes = function(o, W)
    local k = M.divides(o.k, W, "--k")
    return { a = { o.m, k }, b = { k, o.n }, c = { o.m, o.n }, bulk = { o.m, o.n } }
  end,
  fused = function(ctx, t, o) ctx.ops.matmul_all_reduce(t.c, t.a, t.b, o.options) end,
  bulk_name = "ctx.ops.matmul, then ctx.ccl.all_reduce",
  bulk = function(ctx, t, o)
    ctx.ops.matmul(t.bulk, t.a, t.b, { blocks = o.options.blocks })
    ctx.ccl.all_reduce(t.expected, t.bulk)
  end,
}

-- A usage error unless `value` divides by the ranks (the examples split a dimension among them).
function M.divides(value, W, what)
  if value % W ~= 0 then
    iris.options.usage_error("%s (%d) must be a multiple of the %d ranks: each rank takes an equal share", what,
      value, W)
  end
  return value / W
end

return M
