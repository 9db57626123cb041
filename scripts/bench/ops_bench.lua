-- ops_bench: every ctx.ops fused op over a sweep of shapes, three ways measured in the same run: the
-- fused kernel; bulk-synchronous with our own pieces (ctx.ops.matmul, then the ctx.ccl collective, or
-- the other way round); and the vendor's (cuBLAS, then NCCL, both loaded at run time; absent on the cpu
-- and hip backends, and NCCL refuses ranks sharing one GPU: the bench says which and why).
--   mpirun -np 2 iris-lua scripts/bench/ops_bench.lua [--op LIST] [--shapes LIST] [--dtype bfloat16]
--                                                    [--iters N] [--validate] [--csv FILE] [--json FILE]
-- Shapes are Iris's global M x N x K: Iris's default 8192x4608x36864, and shapes where the communication
-- dominates (small K). Time: median of --iters calls, the slowest rank's. TFLOP/s: 2 M N K / time.
-- "bulk/fused" and "vendor/fused" are time ratios (above 1: the fused op is faster). The GEMM alone (ours
-- against cuBLAS) is measured too, on the shapes' local GEMM. docs/ops.md explains the columns.
local reference = require "iris.reference"

local OPS = { "matmul_all_reduce", "matmul_all_gather", "all_gather_matmul", "matmul_reduce_scatter" }
local SHAPES = { cpu = "64x96x64,96x128x32", gpu = "8192x4608x36864,8192x8192x2048,16384x8192x512,4096x4096x256" }

local options = iris.options(arg, {
  name = "ops_bench",
  about = "ctx.ops fused, against our GEMM then our collective, and cuBLAS then NCCL, in the same run",
  options = {
    { "op", table.concat(OPS, ","), "ops to measure", type = "list", choices = OPS },
    { "shapes", SHAPES.cpu, "M x N x K shapes (Iris's global sizes)", type = "list",
      gpu = SHAPES.gpu },
    { "dtype", "bfloat16", "element type", type = "choice", choices = { "float16", "bfloat16", "float32" } },
    { "iters", 3, "timed calls per measurement; the median is reported", min = 1, gpu = 10 },
    { "warmup", 1, "untimed calls before them", min = 0, gpu = 3 },
    { "comm_blocks", 16, "communication blocks of the ops that have them (matmul_all_gather's specialized, "
      .. "all_gather_matmul's staged: the variants auto runs on GPUs)", min = 1 },
    { "validate", true, "check the fused result against the bulk-synchronous one (every element)", type = "boolean",
      gpu = false },
  },
})
if not options then return end
local ops_wanted = options.op
local W = iris.world_size()
local shapes = {}
for _, text in ipairs(options.shapes) do
  local m, n, k = text:match("^(%d+)x(%d+)x(%d+)$")
  if not m then iris.options.usage_error("a shape is MxNxK such as 8192x4608x36864, got '%s'", text) end
  m, n, k = tonumber(m), tonumber(n), tonumber(k)
  if m % W ~= 0 or k % W ~= 0 then
    iris.options.usage_error("shape %s: M and K must be multiples of the %d ranks (each takes a share)", text, W)
  end
  shapes[#shapes + 1] = { m = m, n = n, k = k }
end

local dtype = options.dtype
local element = dtype == "float32" and 4 or 2
-- The largest shape's operands: A, B, a gathered A, C, a partial C and the fused result, each at most M K,
-- K N or M N; and the ops' own workspaces (another M x N, an M x K).
local heap = 0
for _, s in ipairs(shapes) do heap = math.max(heap, (4 * s.m * s.k + s.k * s.n + 4 * s.m * s.n) * element) end
local ctx = iris.init { heap_size = heap + 64 * 1024 * 1024 }
local me = ctx.rank

local function slowest(value) return require("iris.broadcast").slowest(value, "ops_bench: the slowest rank") end

local function timed(fn)
  ctx:synchronize()
  ctx:barrier()
  local ms = iris.bench(fn, { warmup = options.warmup, iters = options.iters }).median_ms
  ctx:synchronize()
  return slowest(ms)
end

-- ---- the vendor: cuBLAS and NCCL ----------------------------------------------------------------------

-- cuBLAS: the GEMM alone, and with NCCL the vendor column. Usable only when every rank has it.
local cublas = { why = "the " .. ctx.backend .. " backend has no vendor GEMM (cuBLAS on cuda only)" }
if ctx.backend == "cuda" then
  local probe = ctx:zeros({ 1, 1 }, dtype)
  local ok, why = pcall(reference.gemm, probe, probe, probe)
  ok, why = reference.on_every_rank(ok, why, "ops_bench: cuBLAS on every rank?")
  cublas = { ok = ok, why = not ok and tostring(why) or nil }
end
local vendor = { why = cublas.why }
if cublas.ok then
  local nccl = reference.open(ctx)
  vendor = nccl.handle and nccl or { why = "NCCL: " .. tostring(nccl.why) }
end

local function gemm(out, a, b, beta) reference.gemm(out, a, b, beta) end
local function nccl(collective, send, recv, count) reference.run(vendor, collective, send, recv, count, dtype) end

-- The bulk-synchronous way of an op that multiplies, then communicates: ours (ctx.ops.matmul into tmp,
-- then ctx.ccl's `collective` into out) and the vendor's (cuBLAS, then NCCL's, which counts the elements
-- of the smaller buffer: all_gather its input, reduce_scatter its output, all_reduce either).
local function gemm_then(collective)
  local function ours(t, out)
    ctx.ops.matmul(t.tmp, t.a, t.b)
    ctx.ccl[collective](out, t.tmp)
  end
  local function theirs(t, out)
    gemm(t.tmp, t.a, t.b)
    nccl(collective, t.tmp, out, math.min(t.tmp:numel(), out:numel()))
  end
  return ours, theirs
end

-- ---- the ops ---------------------------------------------------------------------------------------------

-- For each op, from the global M, N, K: the operands' shapes, the fused call, our bulk-synchronous way
-- and the vendor's (each writing its `out`).
local OP = {}
OP.matmul_all_reduce = {
  shapes = function(s) return { a = { s.m, s.k / W }, b = { s.k / W, s.n }, out = { s.m, s.n }, tmp = { s.m, s.n } } end,
  fused = function(t) ctx.ops.matmul_all_reduce(t.out, t.a, t.b) end,
}
OP.matmul_all_reduce.bulk, OP.matmul_all_reduce.vendor = gemm_then("all_reduce")
local comm = { comm_blocks = options.comm_blocks }
OP.matmul_all_gather = { -- along dim 1: rank r's rows of C, as NCCL's all_gather lays them out
  shapes = function(s) return { a = { s.m / W, s.k }, b = { s.k, s.n }, out = { s.m, s.n }, tmp = { s.m / W, s.n } } end,
  fused = function(t) ctx.ops.matmul_all_gather(t.out, t.a, t.b, comm) end,
  -- What this rank's communication blocks move over the links: its M/W rows of C to every peer.
  sent = function(s) return (W - 1) * (s.m / W) * s.n * element end,
}
OP.matmul_all_gather.bulk, OP.matmul_all_gather.vendor = gemm_then("all_gather")
OP.all_gather_matmul = {
  shapes = function(s)
    return { a = { s.m, s.k / W }, b = { s.k, s.n }, out = { s.m, s.n }, tmp = { s.m, s.k }, stack = { W * s.m, s.k / W } }
  end,
  fused = function(t) ctx.ops.all_gather_matmul(t.out, t.a, t.b, comm) end,
  sent = function(s) return (W - 1) * s.m * (s.k / W) * element end, -- every peer's shard, fetched once
  bulk = function(t, out)
    ctx.ccl.all_gather(t.tmp, t.a, { dim = 2 })
    ctx.ops.matmul(out, t.tmp, t.b)
  end,
  -- NCCL stacks the shards (rank r's m x k/W below rank r-1's): C = the sum of shard r times B's rows of r.
  vendor = function(t, out)
    nccl("all_gather", t.a, t.stack, t.a:numel())
    local kw = t.a._shape[2]
    for r = 0, W - 1 do
      gemm(out, t.stack:narrow(1, r * t.a._shape[1] + 1, t.a._shape[1]), t.b:narrow(1, r * kw + 1, kw), r == 0 and 0 or 1)
    end
  end,
}
OP.matmul_reduce_scatter = { -- along dim 1: rank r gets rows r of the sum
  shapes = function(s) return { a = { s.m, s.k / W }, b = { s.k / W, s.n }, out = { s.m / W, s.n }, tmp = { s.m, s.n } } end,
  fused = function(t) ctx.ops.matmul_reduce_scatter(t.out, t.a, t.b) end,
}
OP.matmul_reduce_scatter.bulk, OP.matmul_reduce_scatter.vendor = gemm_then("reduce_scatter")

-- ---- the sweep ---------------------------------------------------------------------------------------------

local function fmt(ms) return ms and ("%10.3f"):format(ms) or ("%10s"):format("-") end
local function ratio(ms, fused_ms) return ms and ("%8.2f"):format(ms / fused_ms) or ("%8s"):format("-") end

if me == 0 then
  print(("ops_bench on %d rank%s, backend %s (%s, ctx:get_cu_count() %d), %s, median of %d calls"):format(W,
    W == 1 and "" or "s", ctx.backend, ctx.device_name or "?", ctx:get_cu_count(), dtype, options.iters))
  print("vendor: " .. (vendor.handle and "cuBLAS then NCCL" or "none: " .. vendor.why))
  if cublas.ok and not vendor.handle then print("the GEMM alone is compared with cuBLAS") end
  print(("link GB/s per SM: what the %d communication blocks of matmul_all_gather and all_gather_matmul moved over "
    .. "the links, per block, over the fused call's time (their copies are staged through the bulk-copy unit on "
    .. "sm_90+)"):format(options.comm_blocks))
end
local rows = {}
-- Progress past 2 s (iris.progress, as ccl_bench's): a step per op and shape; cleared before each row.
local progress = iris.progress(#shapes * #ops_wanted)
for _, s in ipairs(shapes) do
  local flops = 2 * s.m * s.n * s.k
  if me == 0 then
    print(("\nM x N x K = %d x %d x %d (%.3g TFLOP per call)"):format(s.m, s.n, s.k, flops / 1e12))
    print(("  %-22s %10s %8s %10s %10s %8s %10s %8s %9s"):format("op", "fused ms", "TFLOP/s", "bulk ms", "vendor ms",
      "TFLOP/s", "bulk/fus", "vend/fus", "GB/s/SM"))
  end
  for _, name in ipairs(ops_wanted) do
    local op = OP[name]
    local sh = op.shapes(s)
    -- Allocations are collective: the same order on every rank.
    local t = { a = ctx:randint(-2, 3, sh.a, dtype, 1), b = ctx:randint(-2, 3, sh.b, dtype, 2) }
    for _, key in ipairs { "out", "tmp", "stack" } do t[key] = sh[key] and ctx:zeros(sh[key], dtype) end
    local expected = ctx:zeros(sh.out, dtype)
    progress:step("%s %dx%dx%d", name, s.m, s.n, s.k)
    local fused_ms = timed(function() op.fused(t) end)
    local bulk_ms = timed(function() op.bulk(t, expected) end)
    local vendor_ms = vendor.handle and timed(function() op.vendor(t, expected) end) or nil
    if options.validate then
      t.out:fill(0)
      op.fused(t)
      for _, way in ipairs { "bulk", vendor.handle and "vendor" or nil } do
        expected:fill(0)
        op[way](t, expected)
        ctx:synchronize()
        iris.assert_allclose(t.out, expected, { rtol = dtype == "float32" and 1e-4 or 2e-2, atol = 0.5,
          msg = ("%s %dx%dx%d: the fused result differs from the %s one"):format(name, s.m, s.n, s.k, way) })
      end
    end
    progress:finish()
    -- Only where blocks of their own communicate (the GPU's auto variants), and something crosses a link.
    local per_sm = op.sent and W > 1 and ctx.backend ~= "cpu" and op.sent(s) / (fused_ms * 1e6) / options.comm_blocks or nil
    if me == 0 then
      print(("  %-22s %s %8.4g %s %s %8s %s %s %9s"):format(name, fmt(fused_ms), flops / (fused_ms * 1e9), fmt(bulk_ms),
        fmt(vendor_ms), vendor_ms and ("%8.4g"):format(flops / (vendor_ms * 1e9)) or "-", ratio(bulk_ms, fused_ms),
        ratio(vendor_ms, fused_ms), per_sm and ("%9.2f"):format(per_sm) or "-"))
    end
    rows[#rows + 1] = { op = name, m = s.m, n = s.n, k = s.k, fused_ms = fused_ms, bulk_ms = bulk_ms,
      vendor_ms = vendor_ms, fused_tflops = flops / (fused_ms * 1e9), link_gbs_per_sm = per_sm }
    for _, key in ipairs { "stack", "tmp", "out", "b", "a" } do
      if t[key] then t[key]:free() end
    end
    expected:free()
  end
  -- The GEMM alone, this rank's share of the all-reduce's (M x N x K/W): ours against cuBLAS.
  local a, b, c = ctx:randint(-2, 3, { s.m, s.k / W }, dtype, 3), ctx:randint(-2, 3, { s.k / W, s.n }, dtype, 4),
    ctx:zeros({ s.m, s.n }, dtype)
  local ours = timed(function() ctx.ops.matmul(c, a, b) end)
  local theirs = cublas.ok and timed(function() gemm(c, a, b) end) or nil
  local local_flops = 2 * s.m * s.n * s.k / W
  if me == 0 then
    print(("  %-22s %s %8.4g %10s %s %8s %8s %s"):format("GEMM alone (M N K/W)", fmt(ours), local_flops / (ours * 1e9),
      "", fmt(theirs), theirs and ("%8.4g"):format(local_flops / (theirs * 1e9)) or "-", "",
      theirs and ("%8.2f"):format(theirs / ours) or ("%8s"):format("-")))
  end
  rows[#rows + 1] = { op = "gemm", m = s.m, n = s.n, k = s.k / W, fused_ms = ours, vendor_ms = theirs,
    fused_tflops = local_flops / (ours * 1e9) }
  a:free(); b:free(); c:free()
end
if vendor.handle then reference.close(vendor) end
iris.options.write(options, rows, { columns = { "op", "m", "n", "k", "fused_ms", "bulk_ms", "vendor_ms",
  "fused_tflops", "link_gbs_per_sm" }, setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, dtype = dtype,
  vendor = vendor.handle and "cuBLAS+NCCL" or vendor.why } })
