-- ops_bench: every ctx.ops op over a sweep of shapes, a column per variant measured in the same run
-- (--variants: auto; bulk, ctx.ops.matmul then the ctx.ccl collective, or the other way round; overlap,
-- the vendor's GEMM in chunks beside ctx.ccl's collective of the chunks made, on two streams; fused, the
-- fused kernel auto runs where it does not take bulk; vendor, ctx.ops' own way through cuBLAS and the
-- collective library; copy_engine, the vendor's GEMM in chunks moved by the copy engine; any variant by
-- name, or all of them) and the vendor's, written here apart from
-- ctx.ops (cuBLAS, then NCCL, both loaded at run time; absent on the cpu and hip backends, and NCCL
-- refuses ranks sharing one GPU: the bench says which and why). Each column and the vendor's are timed
-- --passes times, the order of the columns reversed at each pass, and the fastest pass is kept: the
-- first column measured at a shape paid something the others did not (docs/perf.md). On GPUs each timed
-- call waits behind a 2 ms lead kernel (--lead), so the device's time is measured, not the host's
-- issue: LuaJIT compiling traces during a column's first hundred calls took up to a millisecond of a
-- call's issue and made single rows 3 to 4 x slower (docs/perf.md, "The GEMM alone's slow rows").
--   mpirun -np 2 iris-lua scripts/bench/ops_bench.lua [--op LIST] [--shapes LIST] [--dtype bfloat16]
--                          [--variants auto,bulk,overlap,fused|all] [--iters N] [--validate] [--csv FILE] [--json FILE]
-- Shapes are Iris's global M x N x K: Iris's default 8192x4608x36864, and shapes where the communication
-- dominates (small K). Time: median of --iters calls, the slowest rank's. TFLOP/s: 2 M N K / auto's time.
-- "vend/auto" is the vendor's time over auto's (above 1: ours is faster). --validate checks every
-- variant's result, and the vendor's, against bulk's (every element). The GEMM alone (ours against
-- cuBLAS) is measured too, on the shapes' local GEMM. docs/ops.md explains the columns.
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
      .. "all_gather_matmul's staged: the variants auto runs on GPUs; overlap's collectives keep ctx.ccl's grid)",
      min = 1 },
    { "overlap_comm_blocks", 0, "the grid of overlap's chunk collectives (comm_blocks); 0: ctx.ccl's own (auto's)",
      min = 0 },
    { "variants", "auto,bulk,overlap,fused", "columns: auto, bulk, overlap (the vendor's GEMM in chunks beside the "
      .. "collectives), fused (the fused kernel auto runs where it does not take bulk), vendor (ctx.ops' cuBLAS then NCCL), "
      .. "copy_engine (the GEMM's chunks moved by the copy engine), a variant's name, or all (every variant of the ops)", type = "list" },
    { "passes", 2, "times each column is measured, in reversed order at each pass (the fastest is kept)", min = 1 },
    { "lead", 0, "microseconds the device is kept busy before each timed call, so that the host's issue of the call "
      .. "(LuaJIT compiling a trace: up to a millisecond) is not timed (iris.bench's lead); 0: timed too", min = 0,
      gpu = 2000 },
    { "validate", true, "check every variant's result and the vendor's against bulk's (every element)",
      type = "boolean", gpu = false },
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
local ctx = iris.init { heap_size = heap + 256 * 1024 * 1024 }
local me = ctx.rank

local function slowest(value) return require("iris.broadcast").slowest(value, "ops_bench: the slowest rank") end

local function timed(fn)
  ctx:synchronize()
  ctx:barrier()
  local ms = iris.bench(fn, { warmup = options.warmup, iters = options.iters, lead = options.lead }).median_ms
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

-- --validate: every element of `got` against `want` (contiguous, one dtype) on the device, the GPU's
-- shapes being too large to compare in Lua: the count of elements further apart than atol + rtol |want|,
-- and the first of them, which the error shows. Two correct products of 16-bit inputs may differ by more
-- than a rounding of the result: their sums of K products run in different orders and blocks (cuBLAS
-- may split K, and the vendor's all_gather_matmul adds each rank's chunk of K into the 16-bit output,
-- rounding the partial sums), so the absolute tolerance grows with the square root of K, as the sums'
-- rounding errors do (8192 x 4608 x 36864 on 2 x H200: differences of 1 near 17 in 0.8 % of the
-- elements, of 4 near 4 in 151 of 37.7 million).
local differences = iris.compile [[
__global__ void count_differences(const void* got, const void* want, long n, int dtype, float rtol, float atol,
                                  unsigned long long* out) {
  unsigned long long bad = 0, first = static_cast<unsigned long long>(n);
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x) {
    float g, w;
    if (dtype == 0) {
      g = float(static_cast<const iris::half*>(got)[i]), w = float(static_cast<const iris::half*>(want)[i]);
    } else if (dtype == 1) {
      g = float(static_cast<const iris::bfloat16*>(got)[i]), w = float(static_cast<const iris::bfloat16*>(want)[i]);
    } else {
      g = static_cast<const float*>(got)[i], w = static_cast<const float*>(want)[i];
    }
    if (!(fabsf(g - w) <= atol + rtol * fabsf(w))) {
      if (bad == 0) first = static_cast<unsigned long long>(i);
      ++bad;
    }
  }
  if (bad != 0) {
    atomicAdd(&out[0], bad);
    atomicMin(&out[1], first);
  }
}]].count_differences
local DTYPE_CODE = { float16 = 0, bfloat16 = 1, float32 = 2 }
local tally = ctx:zeros({ 2 }, "uint64")
local function check_close(got, want, k, what)
  local n = got:numel()
  tally:fill(0)
  tally:set(2, n)
  differences:launch({ grid = math.max(1, math.min(4 * ctx:get_cu_count(), math.ceil(n / 256))), block = 256 }, got, want,
    n, DTYPE_CODE[dtype], dtype == "float32" and 1e-4 or 2e-2, dtype == "float32" and 0.5 or math.max(0.5, 0.05 * math.sqrt(k)),
    tally)
  ctx:synchronize()
  local bad = tonumber(tally:get(1))
  if bad ~= 0 then
    local first = tonumber(tally:get(2))
    local cols = got._shape[2]
    local r, c = math.floor(first / cols) + 1, first % cols + 1
    error(("ops_bench on rank %d: %s: %d of %d elements differ, the first at {%d, %d}: %s, expected %s"):format(me, what,
      bad, n, r, c, tostring(got:get(r, c)), tostring(want:get(r, c))), 0)
  end
end
local function nccl(collective, send, recv, count) reference.run(vendor, collective, send, recv, count, dtype) end

-- The bulk-synchronous way of an op that multiplies, then communicates: ours (ctx.ops.matmul into tmp,
-- then ctx.ccl's `collective` into out) and the vendor's (cuBLAS, then NCCL's, which counts the elements
-- of the smaller buffer: all_gather its input, reduce_scatter its output, all_reduce either).
local function gemm_then(collective)
  return function(t, out)
    gemm(t.tmp, t.a, t.b)
    nccl(collective, t.tmp, out, math.min(t.tmp:numel(), out:numel()))
  end
end

-- ---- the ops ---------------------------------------------------------------------------------------------

-- For each op, from the global M, N, K: the operands' shapes, whether it takes comm_blocks, and the
-- vendor's way (writing its `out`); ctx.ops[op] with each variant is ours.
local OP = {}
OP.matmul_all_reduce = {
  shapes = function(s) return { a = { s.m, s.k / W }, b = { s.k / W, s.n }, out = { s.m, s.n }, tmp = { s.m, s.n } } end,
  comm = true,
  vendor = gemm_then("all_reduce"),
}
OP.matmul_all_gather = { -- along dim 1: rank r's rows of C, as NCCL's all_gather lays them out
  shapes = function(s) return { a = { s.m / W, s.k }, b = { s.k, s.n }, out = { s.m, s.n }, tmp = { s.m / W, s.n } } end,
  comm = true,
  -- What this rank's communication blocks move over the links: its M/W rows of C to every peer.
  sent = function(s) return (W - 1) * (s.m / W) * s.n * element end,
  vendor = gemm_then("all_gather"),
}
OP.all_gather_matmul = {
  shapes = function(s)
    return { a = { s.m, s.k / W }, b = { s.k, s.n }, out = { s.m, s.n }, tmp = { s.m, s.k }, stack = { W * s.m, s.k / W } }
  end,
  comm = true,
  sent = function(s) return (W - 1) * s.m * (s.k / W) * element end, -- every peer's shard, fetched once
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
  comm = true,
  vendor = gemm_then("reduce_scatter"),
}

-- The columns (--variants, "all" spelled out in the ops' order) and, for an op, the variant a column
-- runs (nil where the op has no such variant).
local ops_lua = require "iris.ops"
local VARIANTS = {}
for _, c in ipairs(require("iris.codes").collectives) do VARIANTS[c.name] = c.variants end
local columns, listed = {}, {}
local function add_column(name)
  if not listed[name] then
    listed[name] = true
    columns[#columns + 1] = name
  end
end
for _, word in ipairs(options.variants) do
  if word == "all" then
    add_column("auto")
    add_column(ops_lua.BULK)
    add_column(ops_lua.OVERLAP)
    add_column(ops_lua.VENDOR)
    add_column(ops_lua.COPY_ENGINE)
    for _, name in ipairs(ops_wanted) do
      for _, v in ipairs(VARIANTS[name]) do add_column(v) end
    end
  else
    local known = word == "auto" or word == "fused"
    for _, name in ipairs(OPS) do
      known = known or ops_lua.lua_variant(name, word)
      for _, v in ipairs(VARIANTS[name]) do known = known or v == word end
    end
    if not known then
      iris.options.usage_error("--variants: '%s' is not auto, bulk, overlap, vendor, copy_engine, fused, all or a "
        .. "variant of the ops", word)
    end
    add_column(word)
  end
end
local function variant_of(column, name)
  if column == "auto" or ops_lua.lua_variant(name, column) then return column end
  if column == "fused" then return ops_lua.FUSED[ctx.backend == "cpu" and "cpu" or "gpu"][name] end
  for _, v in ipairs(VARIANTS[name]) do
    if v == column then return v end
  end
  return nil
end

-- ---- the sweep ---------------------------------------------------------------------------------------------

local function fmt(ms) return ms and ("%11.3f"):format(ms) or ("%11s"):format("-") end
local function ratio(ms, ours_ms) return (ms and ours_ms) and ("%9.2f"):format(ms / ours_ms) or ("%9s"):format("-") end

if me == 0 then
  print(("ops_bench on %d rank%s, backend %s (%s, ctx:get_cu_count() %d), %s, median of %d calls%s"):format(W,
    W == 1 and "" or "s", ctx.backend, ctx.device_name or "?", ctx:get_cu_count(), dtype, options.iters,
    (options.lead > 0 and ctx.backend ~= "cpu") and (", each after a %d us lead (the host's issue not timed)"):format(options.lead)
      or ""))
  print("vendor: " .. (vendor.handle and "cuBLAS then NCCL" or "none: " .. vendor.why))
  if cublas.ok and not vendor.handle then print("the GEMM alone is compared with cuBLAS") end
  print(("ms per call for each variant; \"auto runs\" names auto's choice; vend/auto: the vendor's time over auto's; "
    .. "link GB/s per SM: what the %d communication blocks of matmul_all_gather and all_gather_matmul moved over "
    .. "the links, per block, over auto's time where it ran them"):format(options.comm_blocks))
end
local rows = {}
-- Progress past 2 s (iris.progress, as ccl_bench's): a step per op and shape; cleared before each row.
local progress = iris.progress(#shapes * #ops_wanted)
for _, s in ipairs(shapes) do
  local flops = 2 * s.m * s.n * s.k
  if me == 0 then
    print(("\nM x N x K = %d x %d x %d (%.3g TFLOP per call)"):format(s.m, s.n, s.k, flops / 1e12))
    local head = ("  %-22s"):format("op")
    for _, column in ipairs(columns) do head = head .. (" %11s"):format(column:sub(1, 11)) end
    print(head .. (" %11s %-12s %9s %9s %9s"):format("vendor", "auto runs", "vend/auto", "TFLOP/s", "GB/s/SM"))
  end
  for _, name in ipairs(ops_wanted) do
    local op = OP[name]
    local sh = op.shapes(s)
    -- Allocations are collective: the same order on every rank.
    local t = { a = ctx:randint(-2, 3, sh.a, dtype, 1), b = ctx:randint(-2, 3, sh.b, dtype, 2) }
    for _, key in ipairs { "out", "tmp", "stack" } do t[key] = sh[key] and ctx:zeros(sh[key], dtype) end
    local expected = ctx:zeros(sh.out, dtype)
    progress:step("%s %dx%dx%d", name, s.m, s.n, s.k)
    local function run(variant, out)
      local comm_blocks = (op.comm and variant ~= ops_lua.OVERLAP) and options.comm_blocks or nil
      if variant == ops_lua.OVERLAP and options.overlap_comm_blocks > 0 then comm_blocks = options.overlap_comm_blocks end
      ctx.ops[name](out, t.a, t.b, { variant = variant, comm_blocks = comm_blocks })
    end
    -- Each variant (whichever columns name it) and the vendor's, --passes times in alternating order; the
    -- fastest pass of each.
    local ms, vendor_ms = {}, nil
    local order = {}
    for _, column in ipairs(columns) do
      local v = variant_of(column, name)
      if v and not order[v] then
        order[v] = true
        order[#order + 1] = function() ms[v] = math.min(ms[v] or math.huge, timed(function() run(v, t.out) end)) end
      end
    end
    if vendor.handle then
      order[#order + 1] = function()
        vendor_ms = math.min(vendor_ms or math.huge, timed(function() op.vendor(t, t.out) end))
      end
    end
    for pass = 1, options.passes do
      for i = 1, #order do order[pass % 2 == 1 and i or #order + 1 - i]() end
    end
    local auto_runs = ops_lua.auto_variant(ctx, name, dtype, s.m, s.n, s.k, vendor.handle ~= nil)
    if options.validate then
      run(ops_lua.BULK, expected)
      local checks = {}
      for v in pairs(ms) do checks[#checks + 1] = v end
      table.sort(checks)
      if vendor.handle then checks[#checks + 1] = "cuBLAS then NCCL" end
      for _, v in ipairs(checks) do
        t.out:fill(0)
        if v == "cuBLAS then NCCL" then op.vendor(t, t.out) else run(v, t.out) end
        check_close(t.out, expected, s.k, ("%s %dx%dx%d: %s's result against bulk's"):format(name, s.m, s.n, s.k, v))
      end
    end
    progress:finish()
    local auto_ms = ms.auto or ms[auto_runs]
    -- Only where blocks of their own communicate (the GPU's fused variants), and something crosses a link.
    local per_sm = op.sent and W > 1 and ctx.backend ~= "cpu" and auto_ms and auto_runs ~= ops_lua.BULK
      and op.sent(s) / (auto_ms * 1e6) / options.comm_blocks or nil
    if me == 0 then
      local line = ("  %-22s"):format(name)
      for _, column in ipairs(columns) do
        local v = variant_of(column, name)
        line = line .. " " .. fmt(v and ms[v])
      end
      print(line .. (" %s %-12s %s %9s %9s"):format(fmt(vendor_ms), auto_runs, ratio(vendor_ms, auto_ms),
        auto_ms and ("%9.4g"):format(flops / (auto_ms * 1e9)) or "-", per_sm and ("%9.2f"):format(per_sm) or "-"))
    end
    for _, column in ipairs(columns) do
      local v = variant_of(column, name)
      if v then
        rows[#rows + 1] = { op = name, variant = v, column = column, m = s.m, n = s.n, k = s.k, ms = ms[v],
          vendor_ms = vendor_ms, tflops = flops / (ms[v] * 1e9), auto_runs = auto_runs,
          link_gbs_per_sm = column == "auto" and per_sm or nil }
      end
    end
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
  if options.validate and cublas.ok then
    local mine = ctx:zeros({ s.m, s.n }, dtype)
    ctx.ops.matmul(mine, a, b)
    gemm(c, a, b)
    check_close(mine, c, s.k, ("ctx.ops.matmul %dx%dx%d against cuBLAS"):format(s.m, s.n, s.k / W))
    mine:free()
  end
  local local_flops = 2 * s.m * s.n * s.k / W
  if me == 0 then
    print(("  %-22s %s%s %s %-12s %s %9.4g"):format("GEMM alone (M N K/W)", fmt(ours), (" "):rep(12 * (#columns - 1)), fmt(theirs), "matmul",
      ratio(theirs, ours), local_flops / (ours * 1e9)))
  end
  rows[#rows + 1] = { op = "gemm", variant = "matmul", column = "matmul", m = s.m, n = s.n, k = s.k / W, ms = ours,
    vendor_ms = theirs, tflops = local_flops / (ours * 1e9) }
  a:free(); b:free(); c:free()
end
if vendor.handle then reference.close(vendor) end
iris.options.write(options, rows, { columns = { "op", "variant", "column", "m", "n", "k", "ms", "vendor_ms",
  "tflops", "auto_runs", "link_gbs_per_sm" }, setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, dtype = dtype,
  vendor = vendor.handle and "cuBLAS+NCCL" or vendor.why } })
