-- ctx.ops: matrix multiplications fused with the collectives, Iris's iris.ops (docs/ops.md has the
-- semantics, the variants and where the overlap comes from).
--
-- Policy lives here: arguments checked at the user's line, the variant and grid each call runs with,
-- the workspaces some variants need (allocated once per shape, never re-zeroed). Each op is one kernel
-- file under kernels/ops/ built from the GEMM blocks (device/iris/gemm.hpp) and the tile-level
-- collectives; the fused ones are calls of ctx.ccl's protocol, numbered with ctx.ccl's calls
-- (iris.ccl.calls), so a rank calling another op or collective than its peers gets an error, not a hang.
local ffi = require "ffi"
local errors = require "iris.errors"
local tensor = require "iris.tensor"
local tensor_core = require "iris.tensor_core"
local dtypes = require "iris.dtypes"
local kernel = require "iris.kernel"
local ccl = require "iris.ccl"
local codes = require "iris.codes"
local graph = require "iris.graph"
local collective_calls = require "iris.collective_calls"
local reference = require "iris.reference"
local from_every_rank = require("iris.broadcast").from_every_rank
local bit = require "bit"
local C = ffi.C

local M = {}

local DTYPES = { float16 = true, bfloat16 = true, float32 = true }
-- The device's variant codes and each op's variants: device/iris/impl/abi.h (iris.codes).
local VARIANT_CODE = codes.VARIANT
local VARIANTS = {}
for _, c in ipairs(codes.collectives) do VARIANTS[c.name] = c.variants end
-- What `auto` runs. On GPUs the communication goes to a few blocks of its own where the op has such a
-- variant (the GEMM blocks never wait on the links); the cpu backend runs few blocks at a time, so there
-- every block does both.
local AUTO = {
  gpu = { matmul_all_reduce = "two_shot", all_gather_matmul = "staged", matmul_all_gather = "specialized",
    matmul_reduce_scatter = "two_shot" },
  cpu = { matmul_all_reduce = "two_shot", all_gather_matmul = "pull", matmul_all_gather = "push",
    matmul_reduce_scatter = "two_shot" },
}
-- "bulk", beside each fused op's kernel variants: ctx.ops.matmul into the op's workspace (or out), then
-- ctx.ccl's collective (all_gather_matmul: the collective first). Two kernels, so no overlap; on an H100
-- or H200 its GEMM is the whole-kernel GEMM on Hopper, where the fused kernels multiply on the tile.
local BULK = "bulk"
M.BULK = BULK
-- "overlap", beside bulk: the GEMM cut into chunks, each multiplied by the vendor's GEMM (cuBLAS; where
-- there is none, ctx.ops.matmul) on the main stream while ctx.ccl's collective moves the chunks already
-- made on the backend's second stream (iris_stream_select; docs/architecture.md), ordered by events.
-- Lua-only like bulk: no kernel of its own, so no device variant code.
local OVERLAP = "overlap"
M.OVERLAP = OVERLAP
-- Its chunk count, from the size of the product (2 M N K FLOP, global): one chunk per this many FLOP
-- (on an H100 or H200 about 70 us of cuBLAS, several times a collective call's fixed cost), at least 2
-- (the overlap needs two) and at most OVERLAP_MAX_CHUNKS (each chunk is a collective call and a GEMM
-- launch more). Chunks are whole 128-row (or column) tiles where the dimension allows, else multiples
-- of 8 (16-byte boundaries for 16-bit elements), the last one shorter.
local OVERLAP_CHUNK_FLOP = 5e10
local OVERLAP_MAX_CHUNKS = 8
-- "vendor", beside bulk: the vendor's GEMM (cuBLAS; where there is none, ctx.ops.matmul), then the
-- backend's collective library (NCCL on cuda, RCCL on hip, MPI on cpu: iris.reference) on the same
-- stream. Where fusing loses (most shapes on 2 and 4 H200s, docs/perf.md), auto falls back to it, as the
-- best fused-op systems do. The library's collectives take whole contiguous buffers: gathers and
-- scatters along dim 1 only. Lua-only like bulk: no device variant code.
local VENDOR = "vendor"
M.VENDOR = VENDOR
-- "copy_engine", beside overlap, for the gathering ops: the vendor's GEMM in chunks on the main stream
-- as overlap does, but the chunks move between the ranks by the GPU's copy engine (DMA, no
-- multiprocessor taken from the GEMMs: what overlap's collectives cost, docs/perf.md) on the second
-- stream, and the ranks meet twice a call, not once per chunk: ctx.ccl's copy_engine arrival before
-- the first copy (every rank's destination is free) and its delivery after the last. matmul_all_gather
-- pushes each chunk of this rank's rows into every rank's out as soon as it is multiplied;
-- all_gather_matmul pulls each rank's shard of A while the shards already here are multiplied (the
-- vendor's way: one GEMM per shard, adding into out). The reducing ops: matmul_reduce_scatter pushes
-- each chunk of a peer's rows of the partial product into that peer's inbox as soon as it is multiplied,
-- and adds its inbox into its own rows once; matmul_all_reduce does the same with each rank's block of
-- rows, then pushes its summed block into every rank's out in a second call. Along dim 1 of contiguous
-- tensors, ranks on one node. Lua-only like bulk: no device variant code.
local COPY_ENGINE = "copy_engine"
M.COPY_ENGINE = COPY_ENGINE
local COPY_ENGINE_OPS = { matmul_all_gather = true, all_gather_matmul = true, matmul_reduce_scatter = true,
  matmul_all_reduce = true }
-- Whether `variant` is one of the variants written in Lua here (not a kernel's) that `op` takes.
local function lua_variant(op, variant)
  return variant == BULK or variant == OVERLAP or variant == VENDOR or (variant == COPY_ENGINE and COPY_ENGINE_OPS[op])
end
M.lua_variant = lua_variant
-- auto on a device that runs the whole-kernel GEMM, for float16 and bfloat16: the first rule of the op
-- that holds and can run gives the variant, else bulk. One row per world size measured; a job takes the
-- row of the largest world size not above its own (1 rank: the first row). A rule holds when each of
-- its conditions does: `below` (2 M N K under this many FLOP, global), `k_from` (the k each rank holds,
-- K / W, at least this), `k_below` (K / W under this); a rule without one always holds. "fused" is
-- AUTO's kernel; a "vendor" rule is passed over where the vendor's path cannot run (no NCCL or RCCL on
-- every rank, gathers along dim 2, buffers that are not contiguous), so the rules after it are the
-- choice without the vendor's libraries.
--   2 and 4 ranks, docs/perf.md "auto with the vendor's path": cuBLAS then NCCL (variant vendor) beat
--     bulk, fused and overlap on most op x shape pairs. Ours won all_gather_matmul with fewer than 512
--     columns of A per rank (bulk: 0.337 against 0.471 ms at 16384 x 8192 x 512 on 2 ranks, 0.431
--     against 0.983 on 4), matmul_reduce_scatter under 1e11 FLOP (bulk: 0.127 against 0.138 at 4096 x
--     4096 x 256 on 2, 0.135 against 0.160 on 4) and, from 4 ranks, matmul_all_gather under 5e10 FLOP
--     (the fused kernel: 0.155 against 0.169).
--   2 ranks, docs/perf.md "The gathering ops by the copy engine" (two runs): copy_engine beat cuBLAS then
--     NCCL on matmul_all_gather with fewer than 4096 columns of A per rank from 5e10 FLOP (1.16 / 1.26 x
--     at 8192 x 8192 x 2048, 1.45 / 1.40 x at 16384 x 8192 x 512; 0.83 / 0.88 x at 8192 x 4608 x 36864,
--     where the chunked GEMM loses more than the copies gain), and all_gather_matmul from 4096 (1.28 /
--     1.26 / 1.28 x at 8192 x 4608 x 36864; at 8192 x 8192 x 2048, 1024 a rank, 0.92 / 0.98 / 0.83 x,
--     no better than our vendor's path over three runs).
--     Not measured at 4 ranks yet: the 4-rank row has no copy_engine rule. A copy_engine rule never
--     holds on one rank (nothing moves; one GEMM is faster than its chunks).
--   Without the vendor (earlier runs, docs/perf.md "Fused ops on the whole-kernel GEMM" and "Four GPUs:
--     4 x H200, eager and replayed, and the fused ops"): matmul_all_gather's fused kernel under 1 TFLOP;
--     from 4 ranks all_gather_matmul's fused kernel under 1e11 FLOP or from 4096 k per rank.
local AUTO_RULES = {
  { ranks = 2,
    matmul_all_reduce = { { variant = VENDOR } },
    matmul_all_gather = { { variant = VENDOR, below = 5e10 }, { variant = COPY_ENGINE, k_below = 4096 },
      { variant = VENDOR }, { variant = "fused", below = 1e12 } },
    all_gather_matmul = { { variant = BULK, k_below = 512 }, { variant = COPY_ENGINE, k_from = 4096 },
      { variant = VENDOR } },
    matmul_reduce_scatter = { { variant = BULK, below = 1e11 }, { variant = VENDOR } } },
  { ranks = 4,
    matmul_all_reduce = { { variant = VENDOR } },
    matmul_all_gather = { { variant = "fused", below = 5e10 }, { variant = VENDOR }, { variant = "fused", below = 1e12 } },
    all_gather_matmul = { { variant = BULK, k_below = 512 }, { variant = VENDOR }, { variant = "fused", below = 1e11 },
      { variant = "fused", k_from = 4096 } },
    matmul_reduce_scatter = { { variant = BULK, below = 1e11 }, { variant = VENDOR } } },
}
-- bulk's options for ctx.ccl, one table each, so that a repeated call is ctx.ccl's repeated call (the
-- same options table: launched again as planned)
local DIM_OPTIONS = { { dim = 1 }, { dim = 2 } }
-- (ops_bench measures the fused variant auto runs where bulk is not taken, per device class)
M.FUSED = AUTO
-- The options each function takes.
local OPTIONS = {
  matmul = { "blocks" },
  matmul_all_reduce = { "variant", "blocks", "comm_blocks" },
  all_gather_matmul = { "variant", "blocks", "comm_blocks" },
  matmul_all_gather = { "variant", "blocks", "comm_blocks", "dim" },
  matmul_reduce_scatter = { "variant", "blocks", "comm_blocks", "dim" },
}
local THREADS = C.IRIS_GEMM_THREADS -- gemm::kThreads
local TILE = C.IRIS_GEMM_TILE       -- gemm::kTileM, kTileN
local MAX_BLOCKS = C.IRIS_MAX_BLOCKS -- the call state's progress slots
local COMM_BLOCKS = { gpu = 16, cpu = 1 }
-- The kernels declared IRIS_GEMM_KERNEL (gemm.hpp) fit two blocks per multiprocessor on NVIDIA, which is
-- where the GEMM's speed comes from (docs/perf.md, "The GEMM tile"); elsewhere one. The reducing ops'
-- kernels are not declared so, from measurements on an H200: matmul_all_reduce's five all-reduces need
-- more than the bound's 128 registers a thread (under it the kernel spilled and ran at 0.37 x its speed),
-- and matmul_reduce_scatter ran at 0.70 x its speed with two blocks per SM.
local TWO_BLOCKS_PER_SM = { matmul = true, matmul_all_gather = true, all_gather_matmul = true }
local function blocks_per_sm(ctx, op) return (ctx.backend == "cuda" and TWO_BLOCKS_PER_SM[op]) and 2 or 1 end

local function shape_text(t) return tensor.shape_text(t._shape) end

-- ---- the whole-kernel GEMM on Hopper (gemm.hpp, "The whole-kernel GEMM on Hopper") -------------------
-- 16-bit matrices on an H100 or H200 (kernels compiled for sm_90a) multiply in kernels of their own:
-- TMA loads, warp-specialized, persistent, one block per SM; 1.0 to 1.7 x cuBLAS where the tile above
-- runs at 0.5 x (docs/perf.md). Their operands are tensor maps (ctx:tensor_map).
local TMA = {
  threads = C.IRIS_GEMM_TMA_THREADS, shared = C.IRIS_GEMM_TMA_SHARED_BYTES,
  tile_m = C.IRIS_GEMM_TMA_TILE_M, tile_n = C.IRIS_GEMM_TMA_TILE_N,
  -- The boxes each operand is read or written in ({rows, columns}): A k-major, B and C mn-major.
  box = { a = { 128, 64 }, b = { 64, 64 }, c = { 64, 64 } },
}
M.TMA = TMA

-- Why `ctx` cannot take the whole-kernel GEMM at all, or nil when it can (found once per context).
local function tma_unavailable(ctx)
  if ctx.backend ~= "cuda" then return "the " .. ctx.backend .. " backend has no TMA" end
  local arch = ffi.string(C.iris_device_arch())
  if arch ~= "sm_90a" then return ("kernels are compiled for %s, not sm_90a (an H100 or H200)"):format(arch) end
  return nil
end

-- Why these operands cannot go to the whole-kernel GEMM, or nil when they can: 16-bit elements, rows
-- contiguous and on 16-byte boundaries (what a tensor map takes), no empty dimension.
local function tma_refuses(dt, ...)
  if dt.name ~= "float16" and dt.name ~= "bfloat16" then return dt.name .. " elements (it takes float16 and bfloat16)" end
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    if t._shape[1] == 0 or t._shape[2] == 0 then return "an empty matrix" end
    if t._strides[2] ~= 1 or (t._strides[1] * 2) % 16 ~= 0 or tonumber(ffi.cast("uintptr_t", t:data_ptr())) % 16 ~= 0 then
      return "a matrix whose rows are not contiguous on 16-byte boundaries"
    end
  end
  return nil
end
M.tma_refuses = tma_refuses

-- Tensor maps by tensor: a map depends only on the memory, shape and strides it names, so the one made
-- for a tensor serves again while those are the same (a benchmark's loop encodes nothing).
local maps = setmetatable({}, { __mode = "k" })
local function map_of(ctx, t, box)
  local per = maps[t]
  if not per then
    per = {}
    maps[t] = per
  end
  local key = box[1] * 65536 + box[2]
  local cached = per[key]
  local ptr = t:data_ptr()
  if cached and cached.ptr == ptr and cached.rows == t._shape[1] and cached.cols == t._shape[2]
    and cached.stride == t._strides[1] then
    return cached.map
  end
  local map = ctx:tensor_map(t, box)
  per[key] = { ptr = ptr, rows = t._shape[1], cols = t._shape[2], stride = t._strides[1], map = map }
  return map
end
M.map_of = map_of

-- What auto runs for `op` with these global sizes (M x N x K of the whole product) and, when that is not
-- bulk, why: from the device, the dtype and the sizes only, never the operands' addresses, so that every
-- rank makes the same choice.
-- AUTO_RULES' choice for `op` of these global sizes on `W` ranks: "bulk", or a rule's variant ("fused",
-- "vendor" or another) and why. `passes(variant)`, when given, says why a rule's variant cannot run here
-- (nil: it can); such a rule is passed over.
local function auto_rule(W, op, m, n, k, passes)
  local row = AUTO_RULES[1]
  for _, r in ipairs(AUTO_RULES) do
    if r.ranks <= W then row = r end
  end
  local flop, k_rank = 2 * m * n * k, k / W
  local passed = {}
  for _, rule in ipairs(row[op] or {}) do
    local holds, why
    if rule.below then
      holds, why = flop < rule.below, ("%.3g FLOP: below %.3g"):format(flop, rule.below)
    elseif rule.k_from then
      holds, why = k_rank >= rule.k_from, ("k per rank %d: from %d"):format(k_rank, rule.k_from)
    elseif rule.k_below then
      holds, why = k_rank < rule.k_below, ("k per rank %d: below %d"):format(k_rank, rule.k_below)
    else
      holds, why = true, "at this op"
    end
    if holds and rule.variant == COPY_ENGINE and W == 1 then holds = false end
    local cannot = holds and passes and passes(rule.variant)
    if cannot then
      passed[#passed + 1] = ("%s passed over: %s"):format(rule.variant, cannot)
    elseif holds then
      why = ("%s at %d+ ranks %s beats the others measured"):format(why, row.ranks, rule.variant)
      if #passed > 0 then why = why .. " (" .. table.concat(passed, "; ") .. ")" end
      return rule.variant, why
    end
  end
  return BULK, #passed > 0 and table.concat(passed, "; ") or nil
end
M.auto_rule = auto_rule -- (tests/lua/ops_fused.lua checks the rules against the figures they come from)

local function auto_variant(ctx, tma_why, op, dtype, m, n, k, passes)
  local fused = AUTO[ctx.backend == "cpu" and "cpu" or "gpu"][op]
  if tma_why then return fused, tma_why end
  if dtype ~= "float16" and dtype ~= "bfloat16" then return fused, dtype .. " elements (it takes float16 and bfloat16)" end
  local variant, why = auto_rule(ctx.world_size, op, m, n, k, passes)
  return variant == "fused" and fused or variant, why
end
-- What auto runs for these global sizes; `vendor_available`: whether the vendor's path can run (its
-- libraries on every rank, the operands as it takes them). (scripts/bench/ops_bench.lua prints it)
function M.auto_variant(ctx, op, dtype, m, n, k, vendor_available)
  return auto_variant(ctx, tma_unavailable(ctx), op, dtype, m, n, k, function(v)
    if v == VENDOR and not vendor_available then return "no vendor libraries" end
  end)
end

-- A 53-bit hash of a string (two 32-bit FNV-1a and djb2 walks; a Lua number holds it exactly): what
-- the vendor's path announces to find ranks whose calls differ.
local function hash53(text)
  local fnv, djb = -2128831035, 5381 -- 0x811c9dc5 as a signed 32-bit number
  for i = 1, #text do
    local c = text:byte(i)
    fnv = bit.bxor(fnv, c)
    fnv = bit.tobit(bit.lshift(fnv, 24) + fnv * 403) -- fnv * 16777619 (2^24 + 403), modulo 2^32
    djb = bit.tobit(djb * 33 + c)
  end
  return (fnv % 2 ^ 32) * 2 ^ 21 + djb % 2 ^ 21
end

local function matrix_of(what, name, t, writable)
  ccl.check_tensor(what, name, t, writable)
  if t._ndim ~= 2 then
    errors.raise("invalid_argument", "%s: %s must be a matrix (a 2-d tensor), got shape %s", what, name, shape_text(t))
  end
  if not DTYPES[t.dtype] then
    errors.raise("invalid_argument", "%s: %s is %s; ctx.ops multiplies float16, bfloat16 and float32", what, name,
      t.dtype)
  end
  return t._shape[1], t._shape[2]
end

-- out, a, b: matrices of one float dtype, out apart from both inputs. Returns the dtype and the shapes.
local function check_operands(what, out, a, b)
  local out_rows, out_cols = matrix_of(what, "out", out, true)
  local a_rows, a_cols = matrix_of(what, "A", a)
  local b_rows, b_cols = matrix_of(what, "B", b)
  if a.dtype ~= b.dtype or a.dtype ~= out.dtype then
    errors.raise("invalid_argument", "%s: out is %s, A %s, B %s; they must have one dtype", what, out.dtype, a.dtype,
      b.dtype)
  end
  for _, input in ipairs { { "A", a }, { "B", b } } do
    if ccl.overlap(out, input[2]) then
      errors.raise("invalid_argument", "%s: out and %s overlap; the result needs memory of its own", what, input[1])
    end
  end
  return a._dt, { out_rows, out_cols }, { a_rows, a_cols }, { b_rows, b_cols }
end

-- out, a, b for a product a b (b's rows are a's columns): the dtype and m, n, k.
local function product_operands(what, out, a, b)
  local dt, _, sa, sb = check_operands(what, out, a, b)
  if sb[1] ~= sa[2] then
    errors.raise("invalid_argument", "%s: A is %s and B %s; B needs %d rows", what, shape_text(a), shape_text(b), sa[2])
  end
  return dt, sa[1], sb[2], sa[2]
end

local function expect_shape(what, name, t, rows, cols, why)
  if t._shape[1] ~= rows or t._shape[2] ~= cols then
    errors.raise("invalid_argument", "%s: %s has shape %s; %s makes it %s", what, name, shape_text(t), why,
      tensor.shape_text { rows, cols })
  end
end

local function tiles_of(rows, cols) return math.ceil(rows / TILE) * math.ceil(cols / TILE) end

function M.new(ctx)
  local ops = {}
  local calls = ccl.calls(ctx)
  local workspaces = {}
  local device_class = ctx.backend == "cpu" and "cpu" or "gpu"
  local share -- found at the first call
  local tma_why = tma_unavailable(ctx) -- nil: this device runs the whole-kernel GEMM

  -- The default grid: the blocks of `op`'s kernel that this rank's share of the device holds at once
  -- (ccl.device_share: the multiprocessors divided among the node's ranks that share the device, whose
  -- persistent kernels must all run at once).
  local function blocks_by_default(op)
    if not share then share = ccl.device_share(ctx) end
    return share * blocks_per_sm(ctx, op)
  end

  local function read_options(what, op, opts)
    if opts == nil then opts = {} end
    if type(opts) ~= "table" or tensor.is_tensor(opts) then
      errors.raise("invalid_argument", "%s: options must be a table such as {blocks = 8}, got %s", what,
        ccl.describe(opts))
    end
    errors.check_keys(opts, OPTIONS[op], what)
    -- (ctx:capture: a fused op is a call of ctx.ccl's protocol, compared across ranks as collectives are)
    if op ~= "matmul" and graph.state.on then graph.note_collective(what) end
    local o = { op = op, variant = opts.variant or "auto" }
    if VARIANTS[op] then
      local known = o.variant == "auto" or lua_variant(op, o.variant)
      for _, v in ipairs(VARIANTS[op]) do known = known or v == o.variant end
      if not known then
        local names = { "auto", unpack(VARIANTS[op]) }
        names[#names + 1], names[#names + 2], names[#names + 3] = BULK, OVERLAP, VENDOR
        if COPY_ENGINE_OPS[op] then names[#names + 1] = COPY_ENGINE end
        errors.raise("invalid_argument", "%s: variant must be \"%s\" or \"%s\", got %s", what,
          table.concat(names, "\", \"", 1, #names - 1), names[#names], ccl.describe(o.variant))
      end
      if o.variant == "auto" then o.variant, o.auto = AUTO[device_class][op], true end
    end
    o.dim = opts.dim or 1
    if o.dim ~= 1 and o.dim ~= 2 then
      errors.raise("invalid_argument", "%s: dim must be 1 or 2, got %s", what, ccl.describe(o.dim))
    end
    o.blocks = opts.blocks and ccl.positive_integer(what, "blocks", opts.blocks, MAX_BLOCKS)
    o.comm_blocks = opts.comm_blocks and ccl.positive_integer(what, "comm_blocks", opts.comm_blocks, MAX_BLOCKS)
    return o
  end

  -- GEMM blocks (no more than the tiles) and communication blocks (variants that have them).
  local function grid(what, o, tiles, comm_work)
    if comm_work == 0 then comm_work = nil end
    local comm = 0
    if comm_work then comm = math.max(1, math.min(o.comm_blocks or COMM_BLOCKS[device_class], comm_work)) end
    -- By default the communication blocks take their places from the GEMM's, so that every block of the
    -- call is resident at once and the links are busy while the GEMM runs.
    local gemm = math.max(1, math.min(o.blocks or blocks_by_default(o.op) - comm, tiles))
    if gemm + comm > MAX_BLOCKS then
      errors.raise("invalid_argument", "%s: %d GEMM and %d communication blocks are more than the %d a call runs",
        what, gemm, comm, MAX_BLOCKS)
    end
    return gemm, comm
  end

  local function log_plan(what, dt, m, n, k, o, gemm, comm)
    if C.iris_log_enabled(0) == 0 then return end
    if o.variant == BULK then
      return ctx:debug("%s: %d x %d x %d %s on %d rank%s: bulk%s, ctx.ops.matmul and ctx.ccl's collective", what, m, n,
        k, dt.name, ctx.world_size, ctx.world_size == 1 and "" or "s", o.auto and " (auto)" or "")
    end
    ctx:debug("%s: %d x %d x %d %s on %d rank%s: %s%s, %d GEMM block%s%s of %d threads", what, m, n, k, dt.name,
      ctx.world_size, ctx.world_size == 1 and "" or "s", o.variant, o.auto and " (auto)" or "", gemm,
      gemm == 1 and "" or "s", comm > 0 and (" + %d communication"):format(comm) or "", THREADS)
  end

  -- A workspace of `shape` and dtype for `name`, kept between calls with the same shape (collective: a
  -- new shape allocates on every rank, as the call itself is made on every rank, so ranks calling with
  -- other sizes get the allocation's error, named after the op and its workspace).
  local function workspace(name, shape, dtype, zeroed)
    local w = workspaces[name]
    if w and w.dtype == dtype and w._shape[1] == shape[1] and w._shape[2] == shape[2] then return w end
    if graph.state.on then
      graph.refuse("ctx.ops." .. name:match("^%S+"), "its first call with these shapes allocates a workspace on the "
        .. "symmetric heap, which every rank does together: make that call once before the capture")
    end
    if w then w:free() end
    w = tensor_core.allocate(("ctx.ops.%s's workspace \"%s\""):format(name:match("^%S+"), name), { shape[1], shape[2] },
      shape[1] * shape[2], dtypes.get(dtype), zeroed)
    workspaces[name] = w
    return w
  end

  -- Lua's count of the protocol's calls (ccl.calls: the kernels count on the device); it counts once the
  -- launch went out.
  local function launch(k, blocks, ...)
    k:launch({ grid = blocks, block = THREADS }, ...)
    calls.seq = calls.seq + 1
    collective_calls.record(calls, k)
  end


  -- A job over several nodes: each fused op, once checked, is the GEMM here and ctx.ccl's hierarchical
  -- collective (iris.ccl_nodes).
  local across_nodes = ctx.nodes > 1 and require("iris.ccl_nodes").ops(ctx) or nil

  -- out = a b (checked) on this rank alone: the whole-kernel GEMM on Hopper where it takes the operands,
  -- else the tile. Not collective (one rank may multiply alone), so the grid is this device's own.
  local function multiply(what, out, a, b, dt, m, n, k, blocks)
    local why = tma_why or tma_refuses(dt, a, b, out)
    if not why then
      local tiles = math.ceil(m / TMA.tile_m) * math.ceil(n / TMA.tile_n)
      kernel.builtin("ops/matmul")["ops_matmul_tma_" .. dt.name]:launch(
        { grid = math.max(1, math.min(blocks or ctx:get_cu_count(), tiles)), block = TMA.threads, shared = TMA.shared },
        map_of(ctx, a, TMA.box.a), map_of(ctx, b, TMA.box.b), map_of(ctx, out, TMA.box.c), m, n, k)
      return out
    end
    if C.iris_log_enabled(0) ~= 0 then
      ctx:debug("%s: %d x %d x %d %s on the 128 x 128 tile, not the whole-kernel GEMM on Hopper: %s", what, m, n, k,
        dt.name, why)
    end
    blocks = math.max(1, math.min(blocks or ctx:get_cu_count() * blocks_per_sm(ctx, "matmul"), tiles_of(m, n)))
    kernel.builtin("ops/matmul")["ops_matmul_" .. dt.name]:launch({ grid = blocks, block = THREADS }, a, b, out, m, n, k,
      a._strides[1], b._strides[1], out._strides[1])
    return out
  end

  -- The vendor's GEMM, for the variants vendor and overlap: cuBLAS where this rank has it (asked once),
  -- else ctx.ops.matmul (the cpu and hip backends, a machine without cuBLAS), so the structure is the
  -- same everywhere.
  local vendor_gemm -- true, or why not (a string), once asked
  local function vendor()
    if vendor_gemm == nil then
      vendor_gemm = C.iris_reference_gemm_available() == 0 or ffi.string(C.iris_last_error())
    end
    return vendor_gemm
  end
  local function vendor_gemm_name() return vendor() == true and "cuBLAS" or ("ctx.ops.matmul (" .. vendor() .. ")") end
  local function chunk_gemm(what, out, a, b, dt, blocks)
    if vendor() == true then return reference.gemm(out, a, b) end
    return multiply(what, out, a, b, dt, out._shape[1], out._shape[2], a._shape[2], blocks)
  end

  -- ---- variant vendor -------------------------------------------------------------------------------------
  -- The backend's collective library (iris.reference: NCCL, RCCL or MPI), opened on every rank at the
  -- first call that takes the vendor's path (collective: every rank makes that call); or why there is
  -- none ({ name = "none", why = ... } on every rank alike).
  local library
  local function vendor_library(what)
    if library == nil then
      if graph.state.on then
        graph.refuse(what, "its first call with variant \"vendor\" opens the collective library on every rank: make "
          .. "one such call before the capture")
      end
      library = reference.open(ctx)
    end
    return library
  end

  -- Why the vendor's path cannot take this call on this rank (nil: it can): the library's collectives
  -- take whole contiguous buffers in rank order, so gathers and scatters along dim 1 only; `buffers` the
  -- tensors the library reads or writes whole.
  local function vendor_refuses(o, buffers)
    if o.dim ~= 1 then return "its collectives take chunks along dim 1 only (use dim 1, or another variant)" end
    for name, t in pairs(buffers) do
      if not t._contiguous then return name .. " is not contiguous (the collective library takes whole buffers)" end
    end
    return nil
  end

  -- Why the vendor's path cannot run this call (nil: it can), and the library it would use: this rank's
  -- reasons first, then the library's (opened here at the first such call; none on one rank, where
  -- nothing moves). For auto's choice and for the path itself alike.
  local function vendor_cannot(what, o, buffers)
    local why = vendor_refuses(o, buffers)
    if why or ctx.world_size == 1 then return why, nil end
    local lib = vendor_library(what)
    return not lib.handle and lib.why or nil, lib
  end

  -- Why variant copy_engine cannot take this call (nil: it can). `buffers`: the tensors the copies read
  -- or write whole chunks of.
  local function copy_engine_refuses(o, buffers)
    if o.dim ~= 1 then return "its copies move whole rows: chunks along dim 1 only (use dim 1, or another variant)" end
    for name, t in pairs(buffers) do
      if not t._contiguous then return name .. " is not contiguous (each chunk is one copy)" end
    end
    if across_nodes then return "the copy engine reaches this node's heaps only, and this job spans nodes" end
    return nil
  end

  -- auto's choice for an op of these global sizes (auto_variant), said at debug level. `buffers` as
  -- vendor_refuses'.
  local function choose(what, o, dt, m, n, k, buffers)
    if not o.auto then return end
    local why
    o.variant, why = auto_variant(ctx, tma_why, o.op, dt.name, m, n, k, function(v)
      if v == VENDOR then return (vendor_cannot(what, o, buffers)) end
      if v == COPY_ENGINE then
        return graph.state.on and "its copies cannot be captured" or copy_engine_refuses(o, buffers)
      end
    end)
    if why and C.iris_log_enabled(0) ~= 0 then
      local runs = lua_variant(o.op, o.variant) and o.variant
        or ("the fused kernel (" .. o.variant .. ")")
      ctx:debug("%s: auto runs %s: %s", what, runs, why)
    end
  end

  -- The vendor's call must be every rank's same call: the library's collectives wait for every rank's
  -- matching call, so ranks calling differently would wait for each other for ever. One announcement
  -- (a 64-byte all-gather on the host) of the op and a hash of the call's description finds it; only
  -- then do the ranks exchange their descriptions to name both. Inside a capture the capture compares
  -- its collectives across the ranks at its end instead.
  local announced = ffi.new("uint64_t[?]", ctx.world_size)
  local function vendor_agree(what, description)
    if graph.state.on or ctx.world_size == 1 then return end
    errors.check_waiting(C.iris_announce, what:gsub("^ctx%.", "") .. " (vendor)", hash53(description), announced)
    local differ = false
    for r = 1, ctx.world_size - 1 do differ = differ or announced[r] ~= announced[0] end
    if not differ then return end
    -- (every rank saw the same hashes, so every rank makes this exchange)
    local all = from_every_rank(description, what .. ": the calls' descriptions")
    for q = 1, ctx.world_size - 1 do
      if all[q] ~= all[0] then
        errors.raise("invalid_argument", "ranks called %s differently: rank 0 called it with %s, rank %d with %s "
          .. "(every rank must make the same call)", what, all[0], q, all[q])
      end
    end
  end

  -- Runs the vendor's path of `what` (o.variant == VENDOR) for the product of these global sizes,
  -- raising why it cannot: `run(collective)` makes this rank's product and calls
  -- `collective(name, send, recv, count)` for the library's collective of `count` elements (NCCL's
  -- counts). The ranks agree on the call (vendor_agree) just before the library is called, after
  -- whatever GEMM comes first was enqueued: the announcement's host round runs while the GPU multiplies.
  -- On one rank there is no library, and the ops pass send as recv: the result is there already.
  local function vendor_path(what, o, dt, m, n, k, buffers, run)
    local why, lib = vendor_cannot(what, o, buffers)
    if why then errors.raise("invalid_argument", "%s: variant \"vendor\" cannot run this call: %s", what, why) end
    local description = ("%d x %d x %d %s (M x N x K, variant vendor)"):format(m, n, k, dt.name)
    if C.iris_log_enabled(0) ~= 0 then
      ctx:debug("%s: %s on %d rank%s%s, GEMM by %s then %s", what, description, ctx.world_size,
        ctx.world_size == 1 and "" or "s", o.auto and " (auto)" or "", vendor_gemm_name(), lib and lib.name or "nothing")
    end
    run(function(name, send, recv, count)
      if not lib then
        assert(send:data_ptr() == recv:data_ptr(), "one rank's collective in place") -- (the ops make it so)
        return
      end
      vendor_agree(what, description)
      reference.run(lib, name, send, recv, count, dt.name)
    end)
  end

  -- ---- variant overlap -----------------------------------------------------------------------------------

  -- The chunks `length` rows (or columns) are cut into for a product of `flop` (OVERLAP_CHUNK_FLOP): a
  -- list of {first (1-based), count}; the same on every rank (global sizes only).
  local function overlap_chunks(what, length, flop, along)
    if length < 1 then
      errors.raise("invalid_argument", "%s: variant \"overlap\" cuts the product's %s into chunks and needs at least "
        .. "one; this product has none (use variant \"bulk\")", what, along)
    end
    local count = math.max(2, math.min(OVERLAP_MAX_CHUNKS, math.floor(flop / OVERLAP_CHUNK_FLOP)))
    local size = math.ceil(length / count)
    local unit = size >= TILE and TILE or 8
    size = math.ceil(size / unit) * unit
    local chunks = {}
    for first = 1, length, size do chunks[#chunks + 1] = { first, math.min(size, length - first + 1) } end
    return chunks
  end

  -- Runs the chunks: for a product that is multiplied, then communicated (`communicate_first` false),
  -- chunk i's GEMM on the main stream, then its collective on the second stream once that GEMM is done,
  -- while chunk i + 1's GEMM runs; for all_gather_matmul (true), chunk i's collective on the second
  -- stream, then its GEMM on the main stream once that collective is done. The main stream then waits
  -- for the second stream's last chunk, so what follows the call comes after all of it. An error raised
  -- on the way (a collective's checks) returns the work to the main stream first. `first` and `last`
  -- (optional): run on the second stream before the first chunk's communication (once that stream has
  -- waited for the operands' writers) and after the last's.
  local function overlapped(chunks, communicate_first, gemm, communicate, first, last)
    local ok, err = pcall(function()
      if communicate_first or first then errors.check(C.iris_stream_wait(1)) end -- after the operands' writers
      if first then
        errors.check(C.iris_stream_select(1))
        first()
        errors.check(C.iris_stream_select(0))
      end
      for i = 1, #chunks do
        if communicate_first then
          errors.check(C.iris_stream_select(1))
          -- (false: nothing moved, so the GEMM need not wait for the second stream: copy_engine's own
          -- shard, whose GEMM then does not wait for the call's arrival either)
          if communicate(chunks[i]) ~= false then errors.check(C.iris_stream_wait(0)) end
          errors.check(C.iris_stream_select(0))
          gemm(chunks[i])
        else
          gemm(chunks[i])
          errors.check(C.iris_stream_wait(1))
          errors.check(C.iris_stream_select(1))
          communicate(chunks[i])
          errors.check(C.iris_stream_select(0))
        end
      end
      if last then
        errors.check(C.iris_stream_select(1))
        last()
      end
    end)
    C.iris_stream_select(0)
    errors.check(C.iris_stream_wait(0))
    if not ok then error(err, 0) end
  end

  -- ---- variant copy_engine -------------------------------------------------------------------------------


  -- Runs variant copy_engine's chunks as overlapped does (`communicate_first` alike), the communication
  -- being `copies(chunk)`: {to, from (addresses), bytes} each, enqueued on the second stream for the copy
  -- engine. One call of ctx.ccl's copy_engine protocol around them all, on the second stream once it has
  -- waited for this rank's earlier work: its arrival kernel before the first copy (every rank's
  -- destination is free), its delivery kernel after the last (every rank's copies are done, into this
  -- rank and out of it). `a`, `b` and the rank's `shape` (M x N x K as the op's fused kernels describe it):
  -- the call as the ranks must agree on it, which the arrival kernel checks (a rank calling another
  -- variant, op or collective gets the protocol's error naming both), so no meeting of the hosts is
  -- added; `buffers` (by name) the tensors the copies take chunks of; `global` the op's global M, N, K
  -- (for the debug log).
  local function copied(what, o, dt, global, buffers, a, b, shape, chunks, communicate_first, gemm, copies)
    local why = copy_engine_refuses(o, buffers)
    if why then errors.raise("invalid_argument", "%s: variant \"copy_engine\" cannot run this call: %s", what, why) end
    if C.iris_log_enabled(0) ~= 0 then
      ctx:debug("%s: %d x %d x %d %s (M x N x K, variant copy_engine) on %d rank%s%s, %d chunk%s, GEMM by %s, moved "
        .. "by the copy engine", what, global[1], global[2], global[3], dt.name, ctx.world_size,
        ctx.world_size == 1 and "" or "s", o.auto and " (auto)" or "", #chunks, #chunks == 1 and "" or "s", vendor_gemm_name())
    end
    if ctx.world_size == 1 then
      for i = 1, #chunks do gemm(chunks[i]) end
      return
    end
    if graph.state.on then
      graph.refuse(what, "variant copy_engine's copies are the host's calls on the stream, which a capture does not "
        .. "take yet: use another variant inside ctx:capture")
    end
    local function communicate(c)
      local list = copies(c)
      for _, copy in ipairs(list) do errors.check(C.iris_copy_device_async(copy[1], copy[2], copy[3])) end
      return #list > 0
    end
    local m, n, k = shape[1], shape[2], shape[3]
    overlapped(chunks, communicate_first, gemm, communicate, function()
      ctx.ccl._copy_engine_begin(what, o.op, dt, a, b, m, n, k)
    end, function()
      ctx.ccl._copy_engine_end(what, o.op, dt, a, b, m, n, k)
    end)
  end

  -- The address `bytes` into tensor t's place in rank r's heap.
  local function heap_address(r, t, bytes) return ffi.cast("char*", C.iris_heap_base(r)) + t._offset + bytes end

  -- Variant copy_engine's reduce-scatter by rows, for matmul_reduce_scatter and matmul_all_reduce: rank
  -- q's block of rows of the product (`rows(q)`: first (1-based) and count) is the sum of every rank's
  -- partial product there, and ends on rank q (`own`: this rank's block's place, a view of its out, nil
  -- when the block is empty). The peers' blocks first, from the next rank on, each multiplied into the partials workspace in chunks (so the
  -- first copy starts after a chunk's GEMM, not a block's) and each chunk pushed by the copy engine into
  -- that peer's inbox, in the slot of the sending rank (slots of `slot_rows` rows); this rank's own block
  -- multiplied into `own` last, while the last copies run. One call of ctx.ccl's copy_engine protocol
  -- (`global`: the op's M, N, K for the log; `a`, `b` the tensors the ranks pass alike). Returns the
  -- inbox and where this rank's W - 1 slots lie, to be added into its block once the call is delivered
  -- (after this function the main stream waits for that).
  local function reduce_rows_by_copy_engine(what, o, dt, global, buffers, a, b, shape, rows, own, name)
    local me, W, m, n = ctx.rank, ctx.world_size, a._shape[1], b._shape[2]
    local row_bytes = n * dt.size
    local slot_rows = 0
    for q = 0, W - 1 do slot_rows = math.max(slot_rows, select(2, rows(q))) end
    local partial = W > 1 and workspace(name .. " partials", { m, n }, a.dtype, false)
    local inbox = W > 1 and workspace(name .. " inbox", { W * slot_rows, n }, a.dtype, false)
    local chunks = {}
    for i = 1, W - 1 do
      local q = (me + i) % W
      local first, count = rows(q)
      if count > 0 then
        for _, c in ipairs(overlap_chunks(what, count, 2 * count * n * a._shape[2], "rows")) do
          chunks[#chunks + 1] = { first + c[1] - 1, c[2], q = q, into = c[1] - 1 }
        end
      end
    end
    local first, count = rows(me)
    if count > 0 then chunks[#chunks + 1] = { first, count, q = me } end
    copied(what, o, dt, global, buffers, inbox or a, inbox or a, shape, chunks, false, function(c)
      chunk_gemm(what, c.q == me and own or partial:narrow(1, c[1], c[2]), a:narrow(1, c[1], c[2]), b, dt, o.blocks)
    end, function(c)
      if c.q == me then return {} end
      return { { heap_address(c.q, inbox, (me * slot_rows + c.into) * row_bytes),
        heap_address(me, partial, (c[1] - 1) * row_bytes), c[2] * row_bytes } }
    end)
    local slots = {}
    for i = 1, W - 1 do slots[i] = (me + i) % W * slot_rows + 1 end
    return inbox, slots
  end

  local function log_overlap(what, dt, m, n, k, o, chunks, along)
    if C.iris_log_enabled(0) == 0 then return end
    ctx:debug("%s: %d x %d x %d %s on %d rank%s: overlap%s, %d chunk%s of %d %s, GEMM by %s", what, m, n, k, dt.name,
      ctx.world_size, ctx.world_size == 1 and "" or "s", o.auto and " (auto)" or "", #chunks, #chunks == 1 and "" or "s",
      chunks[1][2], along, vendor_gemm_name())
  end

  -- The operands of chunk c of a product a b cut along dim 1's columns (dim 1: b's columns c) or along
  -- rows (dim 2: a's rows c).
  local function chunk_operands(a, b, dim, c)
    if dim == 1 then return a, b:narrow(2, c[1], c[2]) end
    return a:narrow(1, c[1], c[2]), b
  end

  -- ctx.ccl's options for a chunk's collective: dim, and the grid when comm_blocks names one.
  local function ccl_options(o, dim)
    if o.comm_blocks then return { dim = dim, blocks = o.comm_blocks } end
    return DIM_OPTIONS[dim]
  end

  -- Variant bulk of an op that multiplies, then communicates: a b into `product` (a workspace, or out),
  -- then ctx.ccl's `collective` from it into out.
  local function gemm_then(what, o, dt, m, n, k, out, a, b, product, collective, ccl_options)
    log_plan(what, dt, m, n, k, o, 0, 0)
    multiply(what, product, a, b, dt, m, n, k, o.blocks)
    return ctx.ccl[collective](out, product, ccl_options)
  end

  -- out = a b on this rank alone (the GEMM of the bulk-synchronous baselines).
  function ops.matmul(out, a, b, opts)
    local what = "ctx.ops.matmul"
    local dt, m, n, k = product_operands(what, out, a, b)
    expect_shape(what, "out", out, m, n, "A x B")
    local o = read_options(what, "matmul", opts)
    return multiply(what, out, a, b, dt, m, n, k, o.blocks)
  end

  -- out = the sum over the ranks of a_r b_r (Iris's matmul_all_reduce: A differs per rank).
  function ops.matmul_all_reduce(out, a, b, opts)
    local what = "ctx.ops.matmul_all_reduce"
    local dt, m, n, k = product_operands(what, out, a, b)
    expect_shape(what, "out", out, m, n, "A x B")
    local o = read_options(what, "matmul_all_reduce", opts)
    choose(what, o, dt, m, n, k * ctx.world_size, { out = out })
    if o.variant == VENDOR then -- the product in out, all-reduced in place
      vendor_path(what, o, dt, m, n, k * ctx.world_size, { out = out }, function(collective)
        chunk_gemm(what, out, a, b, dt, o.blocks)
        collective("all_reduce", out, out, m * n)
      end)
      return out
    end
    if o.variant == BULK then return gemm_then(what, o, dt, m, n, k, out, a, b, out, "all_reduce") end
    if o.variant == COPY_ENGINE then
      -- Rank q's block of rows reduced on it as matmul_reduce_scatter's copy_engine does, into its rows of
      -- out; then, in a second call, each chunk of this rank's block, once its slots are added, pushed
      -- into the same rows of every other rank's out.
      local W, me, row_bytes = ctx.world_size, ctx.rank, n * dt.size
      local function rows(q)
        local first = math.floor(q * m / W)
        return first + 1, math.floor((q + 1) * m / W) - first
      end
      local first, count = rows(me)
      local global = { m, n, k * W }
      local inbox, slots = reduce_rows_by_copy_engine(what, o, dt, global, { out = out }, a, b, { m, n, k },
        rows, count > 0 and out:narrow(1, first, count) or nil, "matmul_all_reduce")
      if W == 1 then return out end
      local chunks = count > 0 and overlap_chunks(what, count, 2 * count * n * k, "rows") or {}
      copied(what, o, dt, global, { out = out }, out, out, { m, n, k }, chunks, false, function(c)
        local mine = out:narrow(1, first + c[1] - 1, c[2])
        for _, slot in ipairs(slots) do mine:add_(inbox:narrow(1, slot + c[1] - 1, c[2])) end
      end, function(c)
        local at, list = (first + c[1] - 2) * row_bytes, {}
        for r = 0, W - 1 do
          if r ~= me then list[#list + 1] = { heap_address(r, out, at), heap_address(me, out, at), c[2] * row_bytes } end
        end
        return list
      end)
      return out
    end
    if o.variant == OVERLAP then -- chunks of rows, each all-reduced in place
      local chunks = overlap_chunks(what, m, 2 * m * n * k * ctx.world_size, "rows")
      log_overlap(what, dt, m, n, k * ctx.world_size, o, chunks, "rows")
      local opts = o.comm_blocks and { blocks = o.comm_blocks } or nil
      overlapped(chunks, false, function(c)
        c.out = out:narrow(1, c[1], c[2])
        chunk_gemm(what, c.out, a:narrow(1, c[1], c[2]), b, dt, o.blocks)
      end, function(c) ctx.ccl.all_reduce(c.out, c.out, opts) end)
      return out
    end
    if across_nodes then return across_nodes.matmul_all_reduce(out, a, b, o) end
    local tiles = tiles_of(m, n)
    local specialized = o.variant == "specialized"
    local blocks, comm = grid(what, o, tiles, specialized and tiles or nil)
    -- (the other variants read no flags: out stands in, so that no workspace is allocated, collectively,
    -- before a call whose peers may be calling something else)
    local flags = specialized and workspace("matmul_all_reduce flags", { tiles, 1 }, "uint64", true) or out
    log_plan(what, dt, m, n, k, o, blocks, comm)
    launch(kernel.builtin("ops/matmul_all_reduce")["ops_matmul_all_reduce_" .. dt.name], blocks + comm, a, b, out, m, n,
      k, a._strides[1], b._strides[1], out._strides[1], flags, VARIANT_CODE[o.variant], blocks, ctx)
    return out
  end

  -- out = every rank's a_r b, in rank order along dim (Iris's matmul_all_gather; dim 2 is its
  -- all-scatter of example 07: each rank computes a block of columns).
  function ops.matmul_all_gather(out, a, b, opts)
    local what = "ctx.ops.matmul_all_gather"
    local dt, m, n, k = product_operands(what, out, a, b)
    local o = read_options(what, "matmul_all_gather", opts)
    local W = ctx.world_size
    expect_shape(what, "out", out, o.dim == 1 and W * m or m, o.dim == 1 and n or W * n,
      ("A x B gathered from %d rank%s along dim %d"):format(W, W == 1 and "" or "s", o.dim))
    choose(what, o, dt, o.dim == 1 and W * m or m, o.dim == 1 and n or W * n, k, { out = out })
    if o.variant == VENDOR then -- this rank's product in its own rows of out, gathered in place
      vendor_path(what, o, dt, W * m, n, k, { out = out }, function(collective)
        local mine = out:narrow(1, ctx.rank * m + 1, m)
        chunk_gemm(what, mine, a, b, dt, o.blocks)
        collective("all_gather", mine, out, m * n)
      end)
      return out
    end
    if o.variant == BULK then
      return gemm_then(what, o, dt, m, n, k, out, a, b, workspace("matmul_all_gather product", { m, n }, a.dtype, false),
        "all_gather", DIM_OPTIONS[o.dim])
    end
    if o.variant == COPY_ENGINE then
      -- Chunks of this rank's rows: each multiplied into its own rows of out, then copied into the same
      -- rows of every other rank's out (rows of a row-major matrix: one contiguous copy each).
      local me, row_bytes = ctx.rank, n * dt.size
      local chunks = overlap_chunks(what, m, 2 * W * m * n * k, "rows")
      -- (the call as the ranks compare it names out twice: this rank's rows lie elsewhere on each rank)
      copied(what, o, dt, { W * m, n, k },
        { out = out }, out, out, { m, n, k }, chunks, false, function(c)
          chunk_gemm(what, out:narrow(1, me * m + c[1], c[2]), a:narrow(1, c[1], c[2]), b, dt, o.blocks)
        end, function(c)
          local at, bytes, list = (me * m + c[1] - 1) * row_bytes, c[2] * row_bytes, {}
          for r = 0, W - 1 do
            if r ~= me then list[#list + 1] = { heap_address(r, out, at), heap_address(me, out, at), bytes } end
          end
          return list
        end)
      return out
    end
    if o.variant == OVERLAP then
      -- Each chunk: this rank's product into its own block of out, then gathered in place. Along dim 1
      -- the chunks are columns (a chunk of rows would land in W blocks of out apart, which no 2-d view
      -- of out holds), along dim 2 rows.
      local dim, me = o.dim, ctx.rank
      local along = dim == 1 and "columns" or "rows"
      local chunks = overlap_chunks(what, dim == 1 and n or m, 2 * W * m * n * k, along)
      log_overlap(what, dt, m, n, k, o, chunks, along)
      local opts = ccl_options(o, dim)
      overlapped(chunks, false, function(c)
        c.all = out:narrow(3 - dim, c[1], c[2])
        c.mine = dim == 1 and c.all:narrow(1, me * m + 1, m) or c.all:narrow(2, me * n + 1, n)
        local ca, cb = chunk_operands(a, b, dim, c)
        chunk_gemm(what, c.mine, ca, cb, dt, o.blocks)
      end, function(c) ctx.ccl.all_gather(c.all, c.mine, opts) end)
      return out
    end
    if across_nodes then return across_nodes.matmul_all_gather(out, a, b, o) end
    local tiles = tiles_of(m, n)
    local specialized = o.variant == "specialized"
    local blocks, comm = grid(what, o, tiles, specialized and tiles or nil)
    local flags = workspace("matmul_all_gather flags", specialized and { tiles, 1 } or { 1, 1 }, "uint64", true)
    log_plan(what, dt, m, n, k, o, blocks, comm)
    launch(kernel.builtin("ops/matmul_all_gather")["ops_matmul_all_gather_" .. dt.name], blocks + comm, a, b, out, m, n, k,
      a._strides[1], b._strides[1], out._strides[1], o.dim == 1 and m * out._strides[1] or n, flags, o.dim,
      VARIANT_CODE[o.variant], blocks, ctx)
    return out
  end

  -- all_gather_matmul without the vendor's GEMM (nothing adds into out), for the variants vendor and
  -- copy_engine: the W shards side by side in a workspace (`shard(r)`: rank r's m x k_local rows), then
  -- one GEMM; on one rank the shard itself.
  local function multiply_side_by_side(what, out, shard, b, dt, m, n, k_local, blocks)
    local W = ctx.world_size
    local gathered = shard(0)
    if W > 1 then
      gathered = workspace("all_gather_matmul gathered", { m, W * k_local }, dt.name, false)
      for r = 0, W - 1 do gathered:narrow(2, r * k_local + 1, k_local):copy(shard(r)) end
    end
    multiply(what, out, gathered, b, dt, m, n, W * k_local, blocks)
  end

  -- out = [a_0 ... a_(W-1)] b: A gathered along k from every rank's shard (Iris's all_gather_matmul).
  function ops.all_gather_matmul(out, a, b, opts)
    local what = "ctx.ops.all_gather_matmul"
    local dt, _, sa, sb = check_operands(what, out, a, b)
    local W = ctx.world_size
    local m, k_local, n = sa[1], sa[2], sb[2]
    if sb[1] ~= W * k_local then
      errors.raise("invalid_argument", "%s: A's shard is %s on each of %d rank%s, so B needs %d rows (the gathered "
        .. "k), got %s", what, shape_text(a), W, W == 1 and "" or "s", W * k_local, shape_text(b))
    end
    expect_shape(what, "out", out, m, n, "A gathered x B")
    local o = read_options(what, "all_gather_matmul", opts)
    choose(what, o, dt, m, n, W * k_local, { A = a })
    if o.variant == VENDOR then
      vendor_path(what, o, dt, m, n, W * k_local, { A = a }, function(collective)
        -- The library gathers the shards one below the other (rank r's m x k rows r); the product is the
        -- sum over r of shard r times B's rows of rank r. With cuBLAS, one GEMM per shard adding into
        -- out (16-bit partial sums rounded W - 1 times, as the vendor's own way does); without it, the
        -- shards side by side in a workspace, then one GEMM.
        if W == 1 then return chunk_gemm(what, out, a, b, dt, o.blocks) end
        -- (bulk's and overlap's workspace, of the same size, seen as the shards one below the other)
        local stack = workspace("all_gather_matmul buffer", { m, W * k_local }, a.dtype, false):view({ W * m, k_local })
        collective("all_gather", a, stack, m * k_local)
        if vendor() == true then
          for r = 0, W - 1 do
            reference.gemm(out, stack:narrow(1, r * m + 1, m), b:narrow(1, r * k_local + 1, k_local), r == 0 and 0 or 1)
          end
          return
        end
        multiply_side_by_side(what, out, function(r) return stack:narrow(1, r * m + 1, m) end, b, dt, m, n, k_local,
          o.blocks)
      end)
      return out
    end
    if o.variant == BULK then
      log_plan(what, dt, m, n, W * k_local, o, 0, 0)
      local gathered = workspace("all_gather_matmul buffer", { m, W * k_local }, a.dtype, false)
      ctx.ccl.all_gather(gathered, a, DIM_OPTIONS[2])
      return multiply(what, out, gathered, b, dt, m, n, W * k_local, o.blocks)
    end
    if o.variant == COPY_ENGINE then
      -- One chunk per rank's shard, this rank's first (multiplied from A at once), then the next ranks'
      -- in turn, each pulled whole from that rank's A into the stack of shards (the vendor's workspace)
      -- and multiplied into out once it is here, adding to what the shards before it made.
      local stack = W > 1 and workspace("all_gather_matmul buffer", { m, W * k_local }, a.dtype, false)
        :view({ W * m, k_local })
      local me, chunks = ctx.rank, {}
      for i = 0, W - 1 do chunks[#chunks + 1] = { (me + i) % W } end
      local shard_bytes = m * k_local * dt.size
      copied(what, o, dt, { m, n, W * k_local },
        { A = a }, a, stack or a, { m, n, k_local }, chunks, true, function(c)
          local r = c[1]
          local function shard(q) return q == me and a or stack:narrow(1, q * m + 1, m) end
          if vendor() == true then
            return reference.gemm(out, shard(r), b:narrow(1, r * k_local + 1, k_local), r == me and 0 or 1)
          end
          -- Without the vendor's GEMM, once every shard is here (as the vendor's path does)
          if c == chunks[#chunks] then multiply_side_by_side(what, out, shard, b, dt, m, n, k_local, o.blocks) end
        end, function(c)
          local r = c[1]
          if r == me then return {} end
          return { { heap_address(me, stack, r * shard_bytes), heap_address(r, a, 0), shard_bytes } }
        end)
      return out
    end
    if o.variant == OVERLAP then -- chunks of rows of A gathered, each multiplied once it is here
      local gathered = workspace("all_gather_matmul buffer", { m, W * k_local }, a.dtype, false)
      local chunks = overlap_chunks(what, m, 2 * m * n * W * k_local, "rows")
      log_overlap(what, dt, m, n, W * k_local, o, chunks, "rows")
      local opts = ccl_options(o, 2)
      overlapped(chunks, true, function(c)
        chunk_gemm(what, out:narrow(1, c[1], c[2]), c.gathered, b, dt, o.blocks)
      end, function(c)
        c.gathered = gathered:narrow(1, c[1], c[2])
        ctx.ccl.all_gather(c.gathered, a:narrow(1, c[1], c[2]), opts)
      end)
      return out
    end
    if across_nodes then return across_nodes.all_gather_matmul(out, a, b, o) end
    local staged = o.variant == "staged"
    local pieces = math.ceil(m / TILE) * (W - 1)
    local blocks, comm = grid(what, o, tiles_of(m, n), staged and pieces or nil)
    local gathered = workspace("all_gather_matmul buffer", staged and { m, W * k_local } or { 1, 1 }, a.dtype, false)
    local flags = workspace("all_gather_matmul flags", staged and { W * math.ceil(m / TILE), 1 } or { 1, 1 }, "uint64",
      true)
    log_plan(what, dt, m, n, W * k_local, o, blocks, comm)
    launch(kernel.builtin("ops/all_gather_matmul")["ops_all_gather_matmul_" .. dt.name], blocks + comm, a, b, out, gathered,
      flags, m, n, k_local, a._strides[1], b._strides[1], out._strides[1], VARIANT_CODE[o.variant], comm, ctx)
    return out
  end

  -- out = chunk r (along dim) of the sum over the ranks of a_q b: ctx.ccl.reduce_scatter's convention
  -- (MPI, NCCL, torch), where Iris's keeps the whole shape and writes the rank's tiles.
  function ops.matmul_reduce_scatter(out, a, b, opts)
    local what = "ctx.ops.matmul_reduce_scatter"
    local dt, m, n, k = product_operands(what, out, a, b)
    local o = read_options(what, "matmul_reduce_scatter", opts)
    local W = ctx.world_size
    local along = o.dim == 1 and m or n
    if along % W ~= 0 then
      errors.raise("invalid_argument", "%s: the product has %d %s, not a multiple of the %d ranks it is scattered to",
        what, along, o.dim == 1 and "rows" or "columns", W)
    end
    local cm, cn = o.dim == 1 and m / W or m, o.dim == 1 and n or n / W
    expect_shape(what, "out", out, cm, cn, ("this rank's chunk of A x B along dim %d"):format(o.dim))
    choose(what, o, dt, m, n, k * W, { out = out })
    if o.variant == VENDOR then -- the partial product in a workspace, reduce-scattered into out
      vendor_path(what, o, dt, m, n, k * W, { out = out }, function(collective)
        local partial = W == 1 and out or workspace("matmul_reduce_scatter partials", { m, n }, a.dtype, false)
        chunk_gemm(what, partial, a, b, dt, o.blocks)
        collective("reduce_scatter", partial, out, cm * cn)
      end)
      return out
    end
    if o.variant == BULK then
      return gemm_then(what, o, dt, m, n, k, out, a, b, workspace("matmul_reduce_scatter partials", { m, n }, a.dtype,
        false), "reduce_scatter", DIM_OPTIONS[o.dim])
    end
    if o.variant == COPY_ENGINE then
      -- Rank q's rows of the product are its out: the peers' partial rows pushed into its inbox, its own
      -- multiplied into out, then out adds the W - 1 slots (t:add_ on the main stream, once the call is
      -- delivered: the only work on the multiprocessors besides the GEMMs).
      local inbox, slots = reduce_rows_by_copy_engine(what, o, dt,
        { m, n, k * W }, { out = out }, a, b,
        { m, n, k }, function(q) return q * cm + 1, cm end, out, "matmul_reduce_scatter")
      for _, slot in ipairs(slots) do out:add_(inbox:narrow(1, slot, cm)) end
      return out
    end
    if o.variant == OVERLAP then
      -- Each chunk: the partial product, then reduce-scattered. Along dim 1 the chunks are columns (a
      -- chunk of rows would hold one rank's rows only), along dim 2 rows.
      local partial = workspace("matmul_reduce_scatter partials", { m, n }, a.dtype, false)
      local dim = o.dim
      local along = dim == 1 and "columns" or "rows"
      local chunks = overlap_chunks(what, dim == 1 and n or m, 2 * m * n * k * W, along)
      log_overlap(what, dt, m, n, k * W, o, chunks, along)
      local opts = ccl_options(o, dim)
      overlapped(chunks, false, function(c)
        c.partial, c.out = partial:narrow(3 - dim, c[1], c[2]), out:narrow(3 - dim, c[1], c[2])
        local ca, cb = chunk_operands(a, b, dim, c)
        chunk_gemm(what, c.partial, ca, cb, dt, o.blocks)
      end, function(c) ctx.ccl.reduce_scatter(c.out, c.partial, opts) end)
      return out
    end
    if across_nodes then return across_nodes.matmul_reduce_scatter(out, a, b, o) end
    local tiles = tiles_of(cm, cn)
    local specialized = o.variant == "specialized"
    local blocks, comm = grid(what, o, tiles, specialized and tiles or nil)
    local partial = workspace("matmul_reduce_scatter partials", { m, n }, a.dtype, false)
    local flags = specialized and workspace("matmul_reduce_scatter flags", { tiles, 1 }, "uint64", true) or out
    log_plan(what, dt, m, n, k, o, blocks, comm)
    launch(kernel.builtin("ops/matmul_reduce_scatter")["ops_matmul_reduce_scatter_" .. dt.name], blocks + comm, a, b,
      out, partial, m, n, k, a._strides[1], b._strides[1], out._strides[1], o.dim, flags, VARIANT_CODE[o.variant],
      blocks, ctx)
    return out
  end

  return ops
end

return M
