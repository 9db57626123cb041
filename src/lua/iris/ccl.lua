-- ctx.ccl: collectives over the symmetric heap, run by persistent kernels (docs/collectives.md has
-- the design, the pictures and the protocol).
--
-- Policy lives here: arguments checked at the user's line, the views each kernel tiles, the variant
-- and grid `auto` picks, the debug line that shows the choice. Each collective is one kernel file under
-- kernels/ccl/ (compiled once per process through iris.kernel.builtin) and one function below.
local ffi = require "ffi"
local errors = require "iris.errors"
local tensor = require "iris.tensor"
local kernel = require "iris.kernel"
local trace = require "iris.trace"
local codes = require "iris.codes"
local graph = require "iris.graph"
local dtypes = require "iris.dtypes"
local collective_calls = require "iris.collective_calls"
local C = ffi.C

local M = {}

-- The numbers the kernels receive, each collective's variants and the limits: device/iris/impl/abi.h,
-- the one definition the device reads too (iris.codes; the limits through ffi.C).
local DTYPE_CODE, OP_CODE, VARIANT_CODE = codes.DTYPE, codes.REDUCTION, codes.VARIANT
local VARIANTS = {}
-- VARIANT_OK[collective][variant]: a lookup, not a loop, on every call's path (a loop there keeps
-- LuaJIT from compiling the caller's loop through it: "inner loop in root trace").
local VARIANT_OK = {}
for _, c in ipairs(codes.collectives) do
  VARIANTS[c.name] = c.variants
  VARIANT_OK[c.name] = { auto = true }
  for _, v in ipairs(c.variants) do VARIANT_OK[c.name][v] = true end
end
local OP_NAMES = '"' .. table.concat(codes.names(codes.reductions), '", "'):gsub('", "([^"]*)$', '" or "%1') .. '"'
-- The one-way variants (kernels/ccl/<collective>.hip, ccl_ll_<collective>): data and the call's epoch
-- travel in the same stores into the receivers' staging (M.reserve_staging), for contiguous runs that
-- fit a staging slot.
local ONE_WAY = { ll = true, ll_two_shot = true }

local MAX_RANKS = C.IRIS_MAX_RANKS    -- the state's slots per peer (IRIS_CCL_STATE_BYTES)
local MAX_BLOCKS = C.IRIS_MAX_BLOCKS  -- progress slots
local MAX_THREADS = C.IRIS_MAX_THREADS
-- A block holds a tile in registers (device/iris/impl/ccl_fragment.hpp): units of 16 bytes (shorter at
-- row ends), 8 elements per thread on GPUs, 64 on the cpu backend (at least one unit).
local UNIT_BYTES = C.IRIS_CCL_UNIT_BYTES
local TILE_ELEMENTS_PER_THREAD = { gpu = C.IRIS_CCL_TILE_ELEMENTS_GPU, cpu = C.IRIS_CCL_TILE_ELEMENTS_CPU }
local DEFAULT_TILE = { 32, 64 } -- Iris's

-- The options every collective takes (read_options; docs/lua-api.md lists them).
M.OPTIONS = { "op", "variant", "dim", "group", "async", "block_m", "block_n", "blocks" }

-- ---- the variant table (auto) --------------------------------------------------------------------------
-- Per device class, per collective: the first row whose bounds the call is within (bytes of one rank's
-- input, members) gives the variant and the persistent grid (capped by the tiles there are). The
-- reasoning is here, the measurements in docs/perf.md ("Collectives").
local KiB = 1024
local ANY = math.huge
local PER_MULTIPROCESSOR = "one per multiprocessor" -- a row's blocks: the device's count (its share of it)
local AUTO = {
  gpu = {
    all_reduce = {
      -- One way (ll): a call is one round of stores with the data and the flags together, no barrier
      -- and no end-of-call round trip: the latency floor while a member can push its whole message to
      -- every other (W - 1 copies of it, twice its bytes on the wire). ll_two_shot sends each member's
      -- chunk to its owner and the owner's sum back: two one-way rounds, 2 (W - 1) / W of the message.
      -- Measured on 2 x H200 (docs/perf.md, "One way"): ll 1.32 to 1.50 x NCCL from 4 to 256 KiB,
      -- ll_two_shot ahead from 512 KiB to 1 MiB, two_shot from 2 MiB. More ranks: the design's rows
      -- (ll sends W - 1 copies) until a 4-GPU machine measures them.
      { max_bytes = 256 * KiB, max_ranks = 2, variant = "ll", blocks = 32 },
      { max_bytes = 64 * KiB, max_ranks = 4, variant = "ll", blocks = 32 },
      { max_bytes = 32 * KiB, max_ranks = ANY, variant = "ll", blocks = 32 },
      { max_bytes = 1024 * KiB, max_ranks = ANY, variant = "ll_two_shot", blocks = 64 },
      -- A launch and one round of reads: one_shot's latency wins while the W - 1 copies of the message
      -- it reads stay cheap (at 8 ranks they are 7 messages' worth).
      { max_bytes = 256 * KiB, max_ranks = 4, variant = "one_shot", blocks = 32 },
      { max_bytes = 64 * KiB, max_ranks = ANY, variant = "one_shot", blocks = 32 },
      -- Above, two_shot reads and writes (W-1)/W of the message: the bandwidth-optimal volume. One block
      -- per multiprocessor (its registers fit one): 256 blocks on an H200's 132 left a second, uneven
      -- wave (docs/perf.md, "two_shot's tile and grid": 0.97 -> 1.03 x NCCL at 16 MiB).
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = PER_MULTIPROCESSOR },
    },
    -- The others move each byte once whatever the variant: one way (twice the bytes on the wire, but no
    -- round trips) led to the staging's 4 MiB slots on 2 x H200 (1.2 to 1.7 x NCCL to 1-2 MiB).
    all_gather = {
      { max_bytes = 2048 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, variant = "persistent", blocks = 128 },
    },
    reduce_scatter = {
      { max_bytes = 4096 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = 128 },
    },
    all_to_all = {
      { max_bytes = 4096 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, variant = "push", blocks = 128 },
    },
    -- broadcast's push has the root write W - 1 copies: its links carry all of them (0.32 x NCCL at
    -- 256 MiB on 4 x H200, issue 24); scatter_all_gather (two calls) still had the root send 1.5 times
    -- the message (0.70 to 0.75 x). From 3 ranks, above the one-way sizes, relay: the root sends each
    -- tile once, to the member that passes it on to the others, in one call.
    -- At 4 ranks (4 x H200, docs/perf.md "Four GPUs, again") ll, whose root sends W - 1 copies, fell to
    -- 0.37 to 0.59 x NCCL from 1 to 4 MiB where relay took 0.55 to 0.69 (and 0.85 to 0.97 from 8 to 32 MiB).
    -- relay's tile of 4096 elements (a flag round trip per tile: fewer, larger tiles) on one block per
    -- multiprocessor: 0.85 to 0.91 x from 16 to 256 MiB where 2048 on 128 blocks had 0.68 to 0.80 ("relay's
    -- tile and grid").
    broadcast = {
      { max_bytes = 4096 * KiB, max_ranks = 3, variant = "ll", blocks = 64 },
      { max_bytes = 1024 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, min_ranks = 3, variant = "relay", blocks = PER_MULTIPROCESSOR, tile = { 64, 64 } },
      { max_bytes = ANY, max_ranks = ANY, variant = "push", blocks = 128 },
    },
    -- The rooted collectives: the design's rows until a GPU measures them (docs/perf.md). One way while
    -- the messages fit the staging, as for the others. reduce: the root pulls and reduces every tile
    -- (one round, its links carry (W - 1) messages in); above, two_shot spreads the reductions over the
    -- members and the root takes in only their results.
    reduce = {
      { max_bytes = 1024 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = 1024 * KiB, max_ranks = ANY, variant = "one_shot", blocks = 64 },
      -- (one block per multiprocessor, as all_reduce's: 0.51 -> 0.87 x NCCL at 4 MiB, docs/perf.md)
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = PER_MULTIPROCESSOR },
    },
    gather = {
      { max_bytes = 1024 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, variant = "pull", blocks = 128 },
    },
    scatter = {
      { max_bytes = 4096 * KiB, max_ranks = ANY, variant = "ll", blocks = 64 },
      { max_bytes = ANY, max_ranks = ANY, variant = "pull", blocks = 128 },
    },
  },
  -- The cpu backend runs a launch's blocks on a few threads per rank: more blocks only queue. On the
  -- development machine (docs/perf.md) one_shot led up to 16 KiB and two_shot above; the one-way
  -- variants take the small calls there too, so the suite runs them as GPUs do.
  cpu = {
    all_reduce = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "one_shot", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = 4 },
    },
    all_gather = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "persistent", blocks = 4 },
    },
    reduce_scatter = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = 4 },
    },
    all_to_all = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "push", blocks = 4 },
    },
    broadcast = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "push", blocks = 4 },
    },
    reduce = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "one_shot", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "two_shot", blocks = 4 },
    },
    gather = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "pull", blocks = 4 },
    },
    scatter = {
      { max_bytes = 16 * KiB, max_ranks = ANY, variant = "ll", blocks = 4 },
      { max_bytes = ANY, max_ranks = ANY, variant = "pull", blocks = 4 },
    },
  },
}

-- Threads of a one-way block, and the words (8 bytes of a run) each thread takes at most before the
-- grid grows: small enough that a call's stores leave at once, large enough that few blocks suffice.
local ONE_WAY_THREADS = { gpu = 512, cpu = 32 }
-- Each one-way block has a control warp besides (device/iris/impl/ccl_ll.hpp, kControlThreads).
local CONTROL_THREADS = 32
local ONE_WAY_WORDS_PER_THREAD = { gpu = 2, cpu = 64 }

-- The words (8 bytes) of a one-way call's run that one slot of the staging carries: every member's
-- message or chunk, or for ll_two_shot a member's share of it.
local function words_in_slot(variant, dt, run, members)
  local words = math.ceil(run * dt.size / 8)
  return variant == "ll_two_shot" and math.ceil(words / members) or words
end

-- Whether a one-way variant can take a call: a staging, tensors it takes (`run` not nil), and room.
local function fits_one_way(variant, staging, dt, run, members)
  return staging ~= nil and run ~= nil and words_in_slot(variant, dt, run, members) <= staging.words
end

-- The first row of `table_of[collective]` that takes the call (one-way rows: where it fits the staging).
-- No closures here: this runs on every call, and LuaJIT's compiler stops at the creation of one.
local function choose(table_of, collective, bytes, ranks, staging, dt, run)
  local rows = table_of[collective]
  for i = 1, #rows do
    local row = rows[i]
    if bytes <= row.max_bytes and ranks <= row.max_ranks and ranks >= (row.min_ranks or 1)
      and (not ONE_WAY[row.variant] or fits_one_way(row.variant, staging, dt, run, ranks)) then
      return row
    end
  end
end

local function human(bytes) return ffi.string(C.iris_human_bytes(bytes)) end

-- ---- argument checks ------------------------------------------------------------------------------------

local describe = errors.describe

local function check_tensor(what, name, t, writable)
  if not tensor.is_tensor(t) then
    errors.raise("invalid_argument", "%s: %s must be a heap tensor, got %s", what, name, describe(t))
  end
  tensor.check_live(t, what, true)
  if writable then tensor.check_writable(t, what) end
  if t._ndim > 0 and t._strides[t._ndim] ~= 1 and t._shape[t._ndim] > 1 then
    errors.raise("invalid_argument", "%s: %s's last dimension is not contiguous", what, name)
  end
end

local function positive_integer(what, name, v, max)
  if type(v) ~= "number" or v % 1 ~= 0 or v < 1 or v > max then
    errors.raise("invalid_argument", "%s: %s must be an integer from 1 to %d, got %s", what, name, max, describe(v))
  end
  return v
end

local function group_text(list)
  return "{" .. table.concat(list, ", ") .. "}"
end

-- The members of `group` (nil: every rank), sorted, with this rank's index among them.
local function read_group(what, ctx, group)
  local members = {}
  if group == nil then
    for r = 0, ctx.world_size - 1 do members[#members + 1] = r end
  else
    if type(group) ~= "table" or tensor.is_tensor(group) then
      errors.raise("invalid_argument", "%s: group must be a list of 0-based ranks such as {0, 1}, got %s", what,
        describe(group))
    end
    local seen = {}
    for i = 1, #group do
      local r = group[i]
      if type(r) ~= "number" or r % 1 ~= 0 or r < 0 or r >= ctx.world_size then
        errors.raise("invalid_argument", "%s: group[%d] = %s is not a rank from 0 to %d", what, i, describe(r),
          ctx.world_size - 1)
      end
      if seen[r] then errors.raise("invalid_argument", "%s: rank %d is in the group twice", what, r) end
      seen[r] = true
      members[#members + 1] = r
    end
    if #members == 0 then errors.raise("invalid_argument", "%s: the group is empty", what) end
    table.sort(members)
  end
  local index
  for i, r in ipairs(members) do
    if r == ctx.rank then index = i - 1 end
  end
  if not index then
    errors.raise("invalid_argument", "%s: rank %d is not in the group %s; only members call a collective", what,
      ctx.rank, group_text(members))
  end
  local lo, hi = 0, 0
  for _, r in ipairs(members) do
    if r < 32 then lo = lo + 2 ^ r else hi = hi + 2 ^ (r - 32) end
  end
  return { members = members, size = #members, index = index, lo = lo, hi = hi }
end

-- opts with defaults; `reducing`: op applies. The result is made by one constructor, and a call
-- without options reads a shared empty table: a table grown field by field, and an empty one per call,
-- were allocations on every collective's path (docs/perf.md, "A call on new tensors").
local NO_OPTIONS = {}
-- variant copy_engine's kernels describe a ctx.ccl call by its count alone (kernels/ccl/copy_engine.hip)
local ONE_ROW = { rows = 1, cols = 0 }
local function read_options(what, collective, opts, dt, reducing)
  if opts == nil then opts = NO_OPTIONS end
  if type(opts) ~= "table" or tensor.is_tensor(opts) then
    errors.raise("invalid_argument", "%s: options must be a table such as {op = \"sum\"}, got %s", what, describe(opts))
  end
  errors.check_keys(opts, M.OPTIONS, what)
  local op = opts.op or "sum"
  if reducing then
    if OP_CODE[op] == nil then
      errors.raise("invalid_argument", "%s: op must be %s, got %s", what, OP_NAMES, describe(op))
    end
    if codes.reduction[op].domain == "int" and dt.kind == "float" then
      errors.raise("invalid_argument", "%s: op \"%s\" takes integers or bool, not %s", what, op, dt.name)
    end
  elseif opts.op ~= nil then
    errors.raise("invalid_argument", "%s takes no op", what)
  end
  local variant = opts.variant or "auto"
  if not VARIANT_OK[collective][variant] then
    errors.raise("invalid_argument", "%s: variant must be \"auto\" or \"%s\", got %s", what,
      table.concat(VARIANTS[collective], "\", \""), describe(variant))
  end
  local dim = opts.dim or 1
  if dim ~= 1 and dim ~= 2 then
    errors.raise("invalid_argument", "%s: dim must be 1 or 2, got %s", what, describe(dim))
  end
  if opts.async ~= nil and type(opts.async) ~= "boolean" then
    errors.raise("invalid_argument", "%s: async must be true or false, got %s", what, describe(opts.async))
  end
  return {
    op = op, variant = variant, dim = dim, async = opts.async or false,
    block_m = opts.block_m and positive_integer(what, "block_m", opts.block_m, 65535),
    block_n = opts.block_n and positive_integer(what, "block_n", opts.block_n, 65535),
    blocks = opts.blocks and positive_integer(what, "blocks", opts.blocks, MAX_BLOCKS),
    group = opts.group,
  }
end

-- ---- views ----------------------------------------------------------------------------------------------

-- First and one-past-last byte a tensor touches (its heap offset range).
local function extent(t)
  if t._numel == 0 then return t._offset, t._offset end
  local last = 0
  for d = 1, t._ndim do last = last + (t._shape[d] - 1) * t._strides[d] end
  return t._offset, t._offset + (last + 1) * t._dt.size
end

local function same_layout(a, b)
  if a._offset ~= b._offset or a._ndim ~= b._ndim then return false end
  for d = 1, a._ndim do
    if a._shape[d] ~= b._shape[d] or (a._shape[d] > 1 and a._strides[d] ~= b._strides[d]) then return false end
  end
  return true
end

local function overlap(a, b)
  local a0, a1 = extent(a)
  local b0, b1 = extent(b)
  return a0 < b1 and b0 < a1
end

local function shape_text(t) return tensor.shape_text(t._shape) end

local function check_same_shape(what, out, inp)
  local same = out._ndim == inp._ndim
  for d = 1, out._ndim do same = same and out._shape[d] == inp._shape[d] end
  if not same then
    errors.raise("invalid_argument", "%s: out has shape %s, inp %s; they must be the same", what, shape_text(out),
      shape_text(inp))
  end
end

local function check_dtypes(what, out, inp)
  if out.dtype ~= inp.dtype then
    errors.raise("invalid_argument", "%s: out is %s, inp is %s; they must have the same dtype", what, out.dtype, inp.dtype)
  end
end

-- A 2-D view (rows, cols, row stride) of t; nil when t has more than 2 dimensions and is not contiguous.
local function rows_cols(t)
  if t._ndim <= 1 then return 1, t._numel, t._numel end
  if t._ndim == 2 then return t._shape[1], t._shape[2], t._strides[1] end
end

local function need_2d(what, name, t)
  if t._ndim > 2 then
    errors.raise("invalid_argument", "%s: %s is a %d-d view that is not contiguous; collectives take 1-d and 2-d tensors "
      .. "(and contiguous tensors of any shape)", what, name, t._ndim)
  end
end

-- ---- launching -------------------------------------------------------------------------------------------

-- Threads for a block to hold a bm x bn tile of `dt` (`elements` per thread), or an error saying the tile
-- is too large.
local function threads_for(what, bm, bn, dt, elements)
  local per_unit = UNIT_BYTES / dt.size
  local units_per_thread = math.max(1, elements / per_unit)
  local units = bm * math.ceil(bn / per_unit)
  local threads = math.ceil(units / units_per_thread / 32) * 32
  if threads > MAX_THREADS then
    errors.raise("invalid_argument", "%s: tiles of %d x %d %s elements are too large: a block holds a tile in "
      .. "registers, %d elements per thread of at most %d threads", what, bm, bn, dt.name,
      units_per_thread * per_unit, MAX_THREADS)
  end
  return math.max(32, threads)
end

-- The blocks one rank's persistent kernel may have in flight so that the kernels of every rank on this
-- device run at once: the device's multiprocessors divided among the node's ranks that share it (a
-- block spins until its peers' kernels arrive; on a shared GPU a rank whose grid filled it would keep
-- the others' kernels from starting: measured, a 256-block all_reduce of 2 MiB on two ranks sharing
-- an H200 under MPS waited until IRIS_WAIT_TIMEOUT). Found without asking the other ranks, so a call
-- never waits on the host for a rank that called something else. Also ctx.ops's default grid.
function M.device_share(ctx)
  local sharing = ffi.new("uint32_t[1]")
  errors.check(C.iris_device_sharing(sharing))
  return math.max(1, math.floor(ctx:get_cu_count() / sharing[0])), sharing[0]
end

local function tiles_of(rows, cols, bm, bn)
  return math.ceil(rows / bm) * math.ceil(cols / bn)
end

-- The count of calls a context made through the call protocol (device/iris/impl/ccl_call.hpp): ctx.ccl
-- and ctx.ops (iris.ops) number their calls together, as their kernels share the protocol's state.
local call_counts = setmetatable({}, { __mode = "k" })
function M.calls(ctx)
  local calls = call_counts[ctx]
  if not calls then
    calls = { seq = 0 }
    call_counts[ctx] = calls
  end
  return calls
end

-- ---- the one-way staging ----------------------------------------------------------------------------------
-- Every rank's heap holds, for every source rank, 2 parities x 2 phases of a slot: 16 header lines (a
-- hash of the sender's call and its descriptor), then lines of 16 bytes that carry 8 bytes of data each
-- (device/iris/impl/ccl_lines.hpp, ccl_ll.hpp). Taken at iris.init, as a tensor every rank allocates
-- alike: a sixteenth of the heap, at most 4 MiB of data a slot, none in heaps under 16 MiB (the
-- one-way variants then give way to the others). Where it is goes into every rank's call state.
-- After the slots, point to point's region (ctx.ccl.send and recv; device/iris/impl/ccl_p2p.hpp): its
-- counters, then IRIS_CCL_P2P_SLOTS slots of the same size per source rank.
local LINE_BYTES = 16
local HEADER_BYTES = 16 * LINE_BYTES
local SLOT_DATA_MAX = 4 * 1024 * KiB
local SLOT_DATA_MIN = 4 * KiB
local STAGING_MIN_HEAP = 16 * 1024 * KiB
local stagings = setmetatable({}, { __mode = "k" })

-- Collective: every rank calls it from iris.init.
function M.reserve_staging(ctx)
  if ctx.heap_size < STAGING_MIN_HEAP then return end
  local slots = ctx.world_size * 4
  local share = math.floor(ctx.heap_size / 16 / slots)
  local data = math.min(SLOT_DATA_MAX, math.floor((share - HEADER_BYTES) / 2 / SLOT_DATA_MIN) * SLOT_DATA_MIN)
  if data < SLOT_DATA_MIN then return end
  local slot_bytes = HEADER_BYTES + 2 * data
  local bytes = slots * slot_bytes + C.IRIS_CCL_P2P_STATE_BYTES + ctx.world_size * C.IRIS_CCL_P2P_SLOTS * slot_bytes
  local t = tensor.allocate("iris.init (ctx.ccl's staging)", { bytes }, bytes, dtypes.info.uint8, true)
  local info = ffi.new("uint64_t[2]", t._offset, slot_bytes)
  errors.check(C.iris_copy_from_host(ffi.cast("char*", C.iris_heap_base(ctx.rank)) + C.IRIS_CCL_STAGING_INFO_OFFSET,
    info, 16))
  stagings[ctx] = { tensor = t, slot_bytes = slot_bytes, words = 2 * data / LINE_BYTES, bytes = bytes }
end

-- The staging's figures ({bytes, slot_bytes, words}), nil when the heap has none.
function M.staging(ctx) return stagings[ctx] end

-- A heap size (bytes) that leaves `bytes` for a script's tensors once iris.init took the staging above:
-- the slots are at most a sixteenth of the heap, point to point's region P2P_SLOTS / 4 of that again.
function M.heap_for(bytes)
  local taken = 1 / 16 * (1 + C.IRIS_CCL_P2P_SLOTS / 4)
  return math.ceil((bytes + C.IRIS_CCL_P2P_STATE_BYTES + 1024 * KiB) / (1 - taken) / (1024 * KiB)) * 1024 * KiB
end

-- A device fault that is the call protocol's report names this rank's call and its script line.
errors.on_device_fault(function()
  local ctx = require("iris.context").current()
  return collective_calls.explain(ctx and call_counts[ctx])
end)

function M.new(ctx)
  local state = M.calls(ctx)
  local ccl = {}

  local device_class = ctx.backend == "cpu" and "cpu" or "gpu"
  local elements_per_thread = TILE_ELEMENTS_PER_THREAD[device_class]
  local auto = AUTO[device_class]
  local world_group

  -- The members of this call (the world's are made once). A call with other members is refused at once
  -- where this rank runs code alone (the REPL's :on R): its kernel would wait for ranks that never come.
  local function members(what, o)
    if ctx.world_size > MAX_RANKS then
      errors.raise("invalid_argument", "%s: ctx.ccl works with up to %d ranks (its flags live in each heap's %s runtime "
        .. "scratch region); this job has %d", what, MAX_RANKS, human(C.IRIS_CCL_STATE_BYTES), ctx.world_size)
    end
    local g
    if o.group == nil then
      world_group = world_group or read_group(what, ctx, nil)
      g = world_group
    else
      g = read_group(what, ctx, o.group)
    end
    if g.size > 1 then errors.check(C.iris_comm_require_every_rank(what)) end
    -- Inside ctx:capture(fn) the call is recorded like any launch (its kernel counts its call on the
    -- device, so each replay is a new call); the ranks compare what they captured when it ends.
    if graph.state.on then graph.note_collective(what, o.group and g.members) end
    return g
  end

  -- How one call runs on a rows x cols view: variant, tiles (a single row is tiled in runs of
  -- block_m * block_n elements), grid (no more blocks than work: two_shot's members each take their
  -- share of the tiles) and threads (enough to hold the first tile, cut to the view). `run`: the
  -- elements one slot of the staging carries for a one-way call (each member's message, or chunk), nil
  -- where the tensors do not allow one (not contiguous, chunks along dim 2).
  local share_cap -- the grid's bound where ranks share this GPU (found at the first call)
  local traced -- while a trace is on: the last plan's span (its name and figures), which launch records
  local function grid_cap(o, row)
    local blocks = o.blocks or row.blocks
    if blocks == PER_MULTIPROCESSOR then blocks = M.device_share(ctx) end
    if not o.blocks and device_class == "gpu" then -- ranks sharing a GPU: each keeps to its share
      if not share_cap then
        local share, sharing = M.device_share(ctx)
        share_cap = sharing > 1 and share or math.huge
      end
      blocks = math.min(blocks, share_cap)
    end
    return blocks
  end

  local function plan(what, collective, dt, bytes, o, g, rows, cols, run)
    local staging = M.staging(ctx)
    local row = choose(auto, collective, bytes, g.size, staging, dt, run)
    local variant = o.variant == "auto" and row.variant or o.variant
    if ONE_WAY[variant] then
      if o.variant ~= "auto" and not fits_one_way(variant, staging, dt, run, g.size) then
        errors.raise("invalid_argument", "%s: variant \"%s\" takes contiguous tensors (chunked along dim 1) whose %s "
          .. "fit the staging of one-way calls (%s; this heap of %s has %s); this call needs %s: use variant \"auto\"",
          what, variant, variant == "ll_two_shot" and "chunks" or "messages",
          staging and human(staging.words * 8) .. " a member" or "none below a 16 MiB heap", human(ctx.heap_size),
          staging and human(staging.bytes) or "none", run == nil and "other tensors"
            or human(words_in_slot(variant, dt, run, g.size) * 8))
      end
      local words = math.ceil(run * dt.size / 8)
      local data_threads = math.min(ONE_WAY_THREADS[device_class], math.max(32, math.ceil(words / 32) * 32))
      local grid = math.max(1, math.min(grid_cap(o, row),
        math.ceil(words / data_threads / ONE_WAY_WORDS_PER_THREAD[device_class])))
      local threads = data_threads + CONTROL_THREADS
      if C.iris_log_enabled(0) ~= 0 then
        ctx:debug("%s: %s %s on %d rank%s: %s%s, %d block%s of %d threads, one way", what, human(bytes), dt.name, g.size,
          g.size == 1 and "" or "s", variant, o.variant == "auto" and " (auto)" or "", grid, grid == 1 and "" or "s",
          threads)
      end
      traced = trace.state.on and { what = what, args = { variant = variant, bytes = bytes, dtype = dt.name,
        members = g.size, blocks = grid, call = state.seq + 1 } } or nil
      return variant, grid, threads, 0, 0, staging
    end
    local tile = row.variant == variant and row.tile or DEFAULT_TILE -- (a row's own tile: measured for it)
    local bm, bn = o.block_m or tile[1], o.block_n or tile[2]
    if rows == 1 then bm, bn = 1, bm * bn end
    local tiles = tiles_of(rows, cols, bm, bn)
    local owned = variant == "two_shot" and (collective == "all_reduce" or collective == "reduce")
    local work = owned and math.ceil(tiles / g.size) or tiles -- two_shot: each member its share of the tiles
    local blocks = grid_cap(o, row)
    local grid = math.max(1, math.min(blocks, work))
    if variant == "partitioned" then -- a multiple of the members: as many blocks for each
      grid = g.size * math.max(1, math.min(math.floor(blocks / g.size), tiles, math.floor(MAX_BLOCKS / g.size)))
    end
    local threads = threads_for(what, math.min(bm, math.max(rows, 1)), math.min(bn, math.max(cols, 1)), dt,
      elements_per_thread)
    if C.iris_log_enabled(0) ~= 0 then
      ctx:debug("%s: %s %s on %d rank%s: %s%s, %d block%s of %d threads, tiles %d x %d", what, human(bytes), dt.name,
        g.size, g.size == 1 and "" or "s", variant, o.variant == "auto" and " (auto)" or "", grid,
        grid == 1 and "" or "s", threads, bm, bn)
    end
    traced = trace.state.on and { what = what, args = { variant = variant, bytes = bytes, dtype = dt.name,
      members = g.size, blocks = grid, tile = bm .. "x" .. bn, call = state.seq + 1 } } or nil
    return variant, grid, threads, bm, bn
  end

  -- The 2-D views (rows, cols, each tensor's row stride) of an element-wise collective's out and inp:
  -- the same shape, the same tensor or apart.
  local function elementwise_views(what, out, inp)
    check_same_shape(what, out, inp)
    if out ~= inp and not same_layout(out, inp) and overlap(out, inp) then
      errors.raise("invalid_argument", "%s: out and inp overlap without being the same tensor", what)
    end
    if out._contiguous and inp._contiguous then return 1, inp._numel, inp._numel, inp._numel end
    need_2d(what, "out", out)
    need_2d(what, "inp", inp)
    local rows, cols, in_stride = rows_cols(inp)
    local _, _, out_stride = rows_cols(out)
    return rows, cols, in_stride, out_stride
  end

  -- A rooted call's root: a global rank of the group (default: the group's first member).
  local function root_of(what, root, g)
    if root == nil then return g.members[1] end
    local member = false
    for _, r in ipairs(g.members) do member = member or r == root end
    if type(root) ~= "number" or not member then
      errors.raise("invalid_argument", "%s: root must be a rank of the group %s, got %s", what, group_text(g.members),
        describe(root))
    end
    return root
  end

  -- What every call with an output and an input checks first: tensors, dtypes, options, members.
  local function prepare(what, collective, out, inp, opts, reducing)
    check_tensor(what, "out", out, true)
    check_tensor(what, "inp", inp)
    check_dtypes(what, out, inp)
    local dt = inp._dt
    local o = read_options(what, collective, opts, dt, reducing)
    return dt, o, inp._numel * dt.size, members(what, o)
  end

  -- Whether `plain` is exactly this rank's own chunk of `chunked` (views as chunk_views makes them).
  local function own_chunk(chunked, plain, v, g)
    return plain._offset == chunked._offset + g.index * v.chunk_step * chunked._dt.size
      and (v.rows == 1 or v.plain_stride == v.chunked_stride)
  end

  -- The kernels count their calls on the device (device/iris/impl/ccl_call.hpp, Call::finish), so a
  -- launch replayed from a graph is a new call; state.seq is this process's count of the launches it
  -- made, for traces: it counts once the launch went out.
  -- While a trace is on, the launch is a span named after the collective with the plan's figures (the
  -- kernel's own span, on the device's clock, follows it; its tiles are device events when the trace
  -- records them).
  -- A call that repeats the last call of its collective (the same tensors, still live, and the same
  -- options table, its fields as they were) launches again what that call planned, without its
  -- checks and plan: most of a small call's host time (docs/perf.md, "The fixed cost of a call").
  -- Not while a trace or a capture is on, nor at the debug level, which say something of every call.
  local memo = {} -- collective -> its last call that went the whole way: the entry below, or nil
  local noting -- the entry the next launch completes
  local OPTION_FIELDS = { "op", "variant", "dim", "async", "block_m", "block_n", "blocks" } -- (note() too)
  -- One entry per collective, reused from call to call: every field made at once (false for "none
  -- yet"), so that writing them allocates nothing. A new table of 15 fields per call, grown field by
  -- field, was most of the policy's time for calls on new tensors (`iris-lua -jp`: note() 39 %, remember()
  -- 14 %; docs/perf.md, "A call on new tensors").
  local entries = {}
  local function entry_of(collective)
    local e = entries[collective]
    if not e then
      e = { collective = collective, what = false, a = false, b = false, opts = false, extra = false, members = 0,
            op = false, variant = false, dim = false, async = false, block_m = false, block_n = false, blocks = false,
            keys = 0, k = false, cfg = false, args = false, uncounted = false }
      entries[collective] = e
    end
    return e
  end

  local function count_keys(opts)
    local keys = 0
    for _ in pairs(opts) do keys = keys + 1 end
    return keys
  end

  local function repeated(collective, a, b, opts, extra)
    local m = memo[collective]
    if m == nil or m.a ~= a or m.b ~= b or m.opts ~= opts or m.extra ~= extra or traced or graph.state.on
      or trace.state.on or C.iris_log_enabled(0) ~= 0 or a._alloc[1] ~= 0 or (b ~= nil and b._alloc[1] ~= 0) then
      return nil
    end
    if opts ~= nil then
      for i = 1, #OPTION_FIELDS do
        local f = OPTION_FIELDS[i]
        if opts[f] ~= m[f] then return nil end
      end
      if opts.group ~= nil or count_keys(opts) ~= m.keys then return nil end
    end
    if m.members > 1 then errors.check(C.iris_comm_require_every_rank(m.what)) end
    return m
  end

  local function again(m)
    m.k:launch_list(m.cfg, m.args)
    if not m.uncounted then state.seq = state.seq + 1 end
  end

  -- Before the launch of a call that went the whole way: what repeated() compares the next one with.
  -- The collective's entry is rewritten here, so it is no call to repeat until remember() completes it
  -- (a call that fails on its way leaves none).
  local function note(collective, what, a, b, opts, extra, members)
    memo[collective] = nil
    local e = entry_of(collective)
    e.what, e.a, e.b, e.opts, e.extra, e.members, e.uncounted = what, a, b, opts, extra, members, false
    if opts ~= nil then
      -- OPTION_FIELDS written out: a loop here (or pairs() to count the keys) kept LuaJIT from compiling
      -- the call ("inner loop in root trace"). The options checked on this call's way (read_options) have
      -- no other keys than these and group, so counting the set ones counts them all.
      local op, variant, dim, async, block_m, block_n, blocks =
        opts.op, opts.variant, opts.dim, opts.async, opts.block_m, opts.block_n, opts.blocks
      e.op, e.variant, e.dim, e.async = op, variant, dim, async
      e.block_m, e.block_n, e.blocks = block_m, block_n, blocks
      e.keys = (opts.group ~= nil and 1 or 0) + (op ~= nil and 1 or 0) + (variant ~= nil and 1 or 0)
        + (dim ~= nil and 1 or 0) + (async ~= nil and 1 or 0) + (block_m ~= nil and 1 or 0)
        + (block_n ~= nil and 1 or 0) + (blocks ~= nil and 1 or 0)
    end
    noting = e
  end

  -- The launch of a call that went the whole way, for repeated(). `args`: the kernel's arguments in a
  -- table the call site builds (a varargs table made here kept LuaJIT from compiling the call: a side
  -- trace per call until it gave up, then the interpreter for the whole call).
  local function remember(entry, k, cfg, args)
    entry.k, entry.cfg, entry.args = k, cfg, args
    memo[entry.collective], noting = entry, nil
  end

  -- The kernel's launch (a span while a trace is on); its configuration, for remember().
  local function issue(k, grid, threads, args)
    local cfg = { grid = grid, block = threads }
    if traced then
      trace.host_span(traced.what, "ccl", traced.args, k.launch, k, cfg, unpack(args))
    else
      k:launch_list(cfg, args) -- (not k:launch(cfg, unpack(args)): kernel.lua, launch_list)
    end
    return cfg
  end

  local function launch(k, grid, threads, args)
    local cfg = issue(k, grid, threads, args)
    state.seq = state.seq + 1
    if noting then remember(noting, k, cfg, args) end
    collective_calls.record(state, k)
  end

  -- A launch that is no call of the protocol (send and recv count their messages apart) or not its
  -- first kernel (copy_engine's second): the device's call counter does not move, so neither does
  -- state.seq, which the host's mismatch reports match against it (iris.collective_calls).
  local function launch_uncounted(k, grid, threads, args)
    local cfg = issue(k, grid, threads, args)
    if noting then
      noting.uncounted = true
      remember(noting, k, cfg, args)
    end
  end

  -- Variant copy_engine (kernels/ccl/copy_engine.hip; docs/collectives.md): the call's arrival kernel
  -- (copy_engine_begin), then the copies this rank makes, enqueued on the stream (the GPU's copy
  -- engine), then the deliveries kernel (copy_engine_end). a and b: the tensors the members must pass
  -- alike; count: a member's input elements.
  -- `shape`: ONE_ROW for ctx.ccl's calls (count describes them), else the op's (below).
  local function copy_engine_begin(what, collective, dt, root, g, o, a, b, count, shape)
    if (o.dim or 1) ~= 1 or not a._contiguous or not b._contiguous then
      errors.raise("invalid_argument", "%s: variant \"copy_engine\" takes contiguous tensors chunked along dim 1", what)
    end
    if graph.state.on then
      graph.refuse(what, "variant copy_engine's copies are the host's calls on the stream, which a capture does not "
        .. "take yet: use another variant inside ctx:capture")
    end
    noting = nil -- two launches and the copies between them: not one launch that repeated() could redo
    local k = kernel.builtin("ccl/copy_engine")
    local code, dtype = codes.COLLECTIVE[collective], DTYPE_CODE[dt.name]
    -- the call's first kernel: counted and recorded under the collective's name, as a one-kernel call
    local cfg = { grid = 1, block = 32 }
    if traced then
      trace.host_span(traced.what, "ccl", traced.args, k.ccl_copy_engine_begin.launch, k.ccl_copy_engine_begin, cfg, a,
        b, code, dtype, root, count, shape.rows, shape.cols, o.dim or 1, g.lo, g.hi, ctx)
    else
      k.ccl_copy_engine_begin:launch(cfg, a, b, code, dtype, root, count, shape.rows, shape.cols, o.dim or 1, g.lo, g.hi,
        ctx)
    end
    state.seq = state.seq + 1
    collective_calls.record(state, { name = shape.record or ("ccl_" .. collective) })
  end
  local function copy_engine_end(collective, dt, root, g, o, a, b, count, shape)
    launch_uncounted(kernel.builtin("ccl/copy_engine").ccl_copy_engine_end, 1, 32, { a, b, codes.COLLECTIVE[collective],
      DTYPE_CODE[dt.name], root, count, shape.rows, shape.cols, o.dim or 1, g.lo, g.hi, ctx })
  end
  -- The whole call. `copies`: {member, byte offset into its `into`, from (a local address), bytes}.
  local function copy_engine(what, collective, dt, root, g, o, a, b, count, into, copies)
    copy_engine_begin(what, collective, dt, root, g, o, a, b, count, ONE_ROW)
    for _, c in ipairs(copies) do
      if c[4] > 0 then
        local to = ffi.cast("char*", C.iris_heap_base(c[1])) + into._offset + c[2]
        errors.check(C.iris_copy_device_async(to, c[3], c[4]))
      end
    end
    copy_engine_end(collective, dt, root, g, o, a, b, count, ONE_ROW)
  end

  -- For ctx.ops' variant copy_engine (src/lua/iris/ops.lua): a call of every rank, of op `op` (its
  -- code, and m x n x k in the descriptor as the op's kernels describe it: impl/ops_call.hpp), whose
  -- copies the caller enqueues between the two (on whichever stream it likes, ordered after this one's
  -- stream by events): _copy_engine_begin's kernel waits until every rank has arrived, so their `b` is
  -- free to be written, and finds a call that differs between the ranks, the op's fused kernels and
  -- ctx.ccl's calls included, so the ranks need no other agreement; _copy_engine_end's until every
  -- rank's copies are done. Not public (no entry in docs/lua-api.md).
  local function op_shape(op, dt, m, n) return { rows = m, cols = n, record = "ops_" .. op .. "_" .. dt.name } end
  function ccl._copy_engine_begin(what, op, dt, a, b, m, n, k)
    copy_engine_begin(what, op, dt, 0, members(what, NO_OPTIONS), NO_OPTIONS, a, b, k, op_shape(op, dt, m, n))
  end
  function ccl._copy_engine_end(what, op, dt, a, b, m, n, k)
    copy_engine_end(op, dt, 0, members(what, NO_OPTIONS), NO_OPTIONS, a, b, k, op_shape(op, dt, m, n))
  end

  -- A tensor's address in this rank's heap, `bytes` into it.
  local function address(t, bytes) return ffi.cast("char*", C.iris_heap_base(ctx.rank)) + t._offset + bytes end

  -- out[i] = op over the group of inp[i].
  function ccl.all_reduce(out, inp, opts)
    local m = repeated("all_reduce", out, inp, opts, nil)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.all_reduce"
    local dt, o, bytes, g = prepare(what, "all_reduce", out, inp, opts, true)
    note("all_reduce", what, out, inp, opts, nil, g.size)
    local rows, cols, in_stride, out_stride = elementwise_views(what, out, inp)
    local variant, grid, threads, bm, bn, staging = plan(what, "all_reduce", dt, bytes, o, g, rows, cols,
      rows == 1 and inp._numel or nil)
    if staging then
      launch(kernel.builtin("ccl/all_reduce").ccl_ll_all_reduce, grid, threads, { inp, out, inp._numel, DTYPE_CODE[dt.name],
        OP_CODE[o.op], VARIANT_CODE[variant], g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/all_reduce").ccl_all_reduce, grid, threads, { inp, out, rows, cols, in_stride, out_stride, bm, bn,
      DTYPE_CODE[dt.name], OP_CODE[o.op], VARIANT_CODE[variant], g.lo, g.hi, o.async, ctx })
    return out
  end

  -- root's out = op over the group of inp (the others' out is not written). root: a global rank of the
  -- group (default: its first member).
  function ccl.reduce(out, inp, root, opts)
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    local m = repeated("reduce", out, inp, opts, root)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.reduce"
    local dt, o, bytes, g = prepare(what, "reduce", out, inp, opts, true)
    note("reduce", what, out, inp, opts, root, g.size)
    root = root_of(what, root, g)
    local rows, cols, in_stride, out_stride = elementwise_views(what, out, inp)
    local variant, grid, threads, bm, bn, staging = plan(what, "reduce", dt, bytes, o, g, rows, cols,
      rows == 1 and inp._numel or nil)
    if staging then
      launch(kernel.builtin("ccl/reduce").ccl_ll_reduce, grid, threads, { inp, out, inp._numel, DTYPE_CODE[dt.name],
        OP_CODE[o.op], root, g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/reduce").ccl_reduce, grid, threads, { inp, out, rows, cols, in_stride, out_stride, bm, bn,
      DTYPE_CODE[dt.name], OP_CODE[o.op], VARIANT_CODE[variant], root, g.lo, g.hi, o.async, ctx })
    return out
  end

  -- `chunked` holds W chunks of `plain`'s shape along dim: the 2-D views both are tiled as (one chunk's
  -- rows and columns, each tensor's row stride, the chunk step in `chunked`).
  local function chunk_views(what, o, size, chunked, chunked_name, plain, plain_name)
    local dim = o.dim
    if dim > math.max(plain._ndim, 1) then
      errors.raise("invalid_argument", "%s: dim %d needs 2-d tensors; %s has shape %s", what, dim, plain_name,
        shape_text(plain))
    end
    local expected = {}
    for d = 1, math.max(plain._ndim, 1) do expected[d] = plain._shape[d] or 1 end
    expected[dim] = expected[dim] * size
    local fits = chunked._ndim == math.max(plain._ndim, 1)
    for d = 1, #expected do fits = fits and chunked._shape[d] == expected[d] end
    if not fits then
      errors.raise("invalid_argument", "%s: %s has shape %s, so %s must have shape %s (%d members along dim %d), got %s",
        what, plain_name, shape_text(plain), chunked_name, tensor.shape_text(expected), size, dim, shape_text(chunked))
    end
    if chunked._contiguous and plain._contiguous and dim == 1 then
      local n = plain._numel
      return { rows = 1, cols = n, plain_stride = n, chunked_stride = n, chunk_step = n }
    end
    need_2d(what, chunked_name, chunked)
    need_2d(what, plain_name, plain)
    local rows, cols, plain_stride = rows_cols(plain)
    local _, _, chunked_stride = rows_cols(chunked)
    return { rows = rows, cols = cols, plain_stride = plain_stride, chunked_stride = chunked_stride,
      chunk_step = dim == 1 and rows * chunked_stride or cols }
  end

  local function check_apart(what, out, inp, allowed)
    if overlap(out, inp) and not allowed then
      errors.raise("invalid_argument", "%s: out and inp overlap; this collective needs them apart", what)
    end
  end

  -- out = every member's inp, in member order, along dim.
  function ccl.all_gather(out, inp, opts)
    local m = repeated("all_gather", out, inp, opts, nil)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.all_gather"
    local dt, o, bytes, g = prepare(what, "all_gather", out, inp, opts, false)
    note("all_gather", what, out, inp, opts, nil, g.size)
    local v = chunk_views(what, o, g.size, out, "out", inp, "inp")
    check_apart(what, out, inp, own_chunk(out, inp, v, g)) -- in place: inp is copied onto itself
    local variant, grid, threads, bm, bn, staging = plan(what, "all_gather", dt, bytes, o, g, v.rows, v.cols,
      (v.rows == 1 and v.chunk_step == v.cols) and v.cols or nil)
    if variant == "copy_engine" then -- inp into chunk (this member's index) of every member's out
      local copies = {}
      for _, q in ipairs(g.members) do copies[#copies + 1] = { q, g.index * bytes, address(inp, 0), bytes } end
      local in_place = own_chunk(out, inp, v, g) -- inp is here already; the members' inp differ, their out not
      if in_place then table.remove(copies, g.index + 1) end
      copy_engine(what, "all_gather", dt, 0, g, o, in_place and out or inp, out, inp._numel, out, copies)
      return out
    end
    if staging then
      launch(kernel.builtin("ccl/all_gather").ccl_ll_all_gather, grid, threads, { inp, out, v.cols, DTYPE_CODE[dt.name], g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/all_gather").ccl_all_gather, grid, threads, { inp, out, v.rows, v.cols, v.plain_stride,
      v.chunked_stride, v.chunk_step, bm, bn, DTYPE_CODE[dt.name], o.dim, VARIANT_CODE[variant], g.lo, g.hi, ctx })
    return out
  end

  -- Member i's out = chunk i (along dim) of the reduction of every member's inp.
  function ccl.reduce_scatter(out, inp, opts)
    local m = repeated("reduce_scatter", out, inp, opts, nil)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.reduce_scatter"
    local dt, o, bytes, g = prepare(what, "reduce_scatter", out, inp, opts, true)
    note("reduce_scatter", what, out, inp, opts, nil, g.size)
    local v = chunk_views(what, o, g.size, inp, "inp", out, "out")
    -- out may be this rank's own chunk of inp: the members read only their own chunks of it.
    check_apart(what, out, inp, own_chunk(inp, out, v, g))
    local _, grid, threads, bm, bn, staging = plan(what, "reduce_scatter", dt, bytes, o, g, v.rows, v.cols,
      (v.rows == 1 and v.chunk_step == v.cols) and v.cols or nil)
    if staging then
      launch(kernel.builtin("ccl/reduce_scatter").ccl_ll_reduce_scatter, grid, threads, { inp, out, v.cols, DTYPE_CODE[dt.name],
        OP_CODE[o.op], g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/reduce_scatter").ccl_reduce_scatter, grid, threads, { inp, out, v.rows, v.cols, v.chunked_stride,
      v.plain_stride, v.chunk_step, bm, bn, DTYPE_CODE[dt.name], o.dim, OP_CODE[o.op], g.lo, g.hi,
      o.async, ctx })
    return out
  end

  -- Chunk j (along dim) of member i's inp lands in chunk i of member j's out.
  function ccl.all_to_all(out, inp, opts)
    local m = repeated("all_to_all", out, inp, opts, nil)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.all_to_all"
    local dt, o, bytes, g = prepare(what, "all_to_all", out, inp, opts, false)
    note("all_to_all", what, out, inp, opts, nil, g.size)
    check_same_shape(what, out, inp)
    check_apart(what, out, inp, false)
    if o.dim > math.max(inp._ndim, 1) then
      errors.raise("invalid_argument", "%s: dim %d needs 2-d tensors; inp has shape %s", what, o.dim, shape_text(inp))
    end
    local along = inp._ndim == 0 and 1 or inp._shape[o.dim]
    if along % g.size ~= 0 then
      errors.raise("invalid_argument", "%s: dimension %d of inp has %d elements, not a multiple of the %d members",
        what, o.dim, along, g.size)
    end
    local rows, cols, in_stride, out_stride, in_step, out_step
    if inp._contiguous and out._contiguous and o.dim == 1 then
      local n = inp._numel / g.size
      rows, cols, in_stride, out_stride, in_step, out_step = 1, n, n, n, n, n
    else
      need_2d(what, "inp", inp)
      need_2d(what, "out", out)
      rows, cols = inp._shape[1], inp._shape[2]
      if o.dim == 1 then rows = rows / g.size else cols = cols / g.size end
      in_stride, out_stride = inp._strides[1], out._strides[1]
      in_step = o.dim == 1 and rows * in_stride or cols
      out_step = o.dim == 1 and rows * out_stride or cols
    end
    local variant, grid, threads, bm, bn, staging = plan(what, "all_to_all", dt, bytes, o, g, rows, cols,
      (rows == 1 and in_step == cols and out_step == cols) and cols or nil)
    if variant == "copy_engine" then -- chunk j of inp into chunk (this member's index) of member j's out
      local chunk = bytes / g.size
      local copies = {}
      for j, q in ipairs(g.members) do copies[j] = { q, g.index * chunk, address(inp, (j - 1) * chunk), chunk } end
      copy_engine(what, "all_to_all", dt, 0, g, o, inp, out, inp._numel, out, copies)
      return out
    end
    if staging then
      launch(kernel.builtin("ccl/all_to_all").ccl_ll_all_to_all, grid, threads, { inp, out, cols, DTYPE_CODE[dt.name], g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/all_to_all").ccl_all_to_all, grid, threads, { inp, out, rows, cols, in_stride, out_stride, in_step,
      out_step, bm, bn, DTYPE_CODE[dt.name], o.dim, g.lo, g.hi, ctx })
    return out
  end

  -- t := root's t on every member. root is a global rank (default: the group's first member).
  function ccl.broadcast(t, root, opts)
    local what = "ctx.ccl.broadcast"
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    local m = repeated("broadcast", t, nil, opts, root)
    if m then
      again(m)
      return t
    end
    check_tensor(what, "t", t, true)
    local dt = t._dt
    local o = read_options(what, "broadcast", opts, dt, false)
    local bytes = t._numel * dt.size
    local g = members(what, o)
    note("broadcast", what, t, nil, opts, root, g.size)
    root = root_of(what, root, g)
    local rows, cols, stride
    if t._contiguous then
      rows, cols, stride = 1, t._numel, t._numel
    else
      need_2d(what, "t", t)
      rows, cols, stride = rows_cols(t)
    end
    local variant, grid, threads, bm, bn, staging = plan(what, "broadcast", dt, bytes, o, g, rows, cols,
      rows == 1 and cols or nil)
    if variant == "scatter_all_gather" then
      -- two calls of the group, each with its own checks and counters: chunks along dim 1
      local first = t._shape[1]
      if t._contiguous and first % g.size == 0 then
        local n = first / g.size
        local mine = t:narrow(1, g.index * n + 1, n)
        local parts = { group = o.group, blocks = o.blocks }
        ccl.scatter(mine, t, root, parts)
        ccl.all_gather(t, mine, parts)
        return t
      end
      if o.variant ~= "auto" then
        errors.raise("invalid_argument", "%s: variant \"scatter_all_gather\" takes a contiguous tensor whose first "
          .. "dimension (%d) divides by the group's %d members: use variant \"auto\"", what, first, g.size)
      end
      o = setmetatable({ variant = "push" }, { __index = o })
      variant, grid, threads, bm, bn, staging = plan(what, "broadcast", dt, bytes, o, g, rows, cols, nil)
    end
    if variant == "copy_engine" then -- the root's t into every other member's
      local copies = {}
      if ctx.rank == root then
        for _, q in ipairs(g.members) do
          if q ~= root then copies[#copies + 1] = { q, 0, address(t, 0), bytes } end
        end
      end
      copy_engine(what, "broadcast", dt, root, g, o, t, t, t._numel, t, copies)
      return t
    end
    if staging then
      launch(kernel.builtin("ccl/broadcast").ccl_ll_broadcast, grid, threads, { t, cols, DTYPE_CODE[dt.name], root, g.lo, g.hi, ctx })
      return t
    end
    launch(kernel.builtin("ccl/broadcast").ccl_broadcast, grid, threads, { t, rows, cols, stride, bm, bn, DTYPE_CODE[dt.name], root,
      VARIANT_CODE[variant], g.lo, g.hi, ctx })
    return t
  end

  -- Chunk i (along dim) of root's out = member i's inp (the others' out is not written). In place:
  -- every member's inp is its own chunk of its out.
  function ccl.gather(out, inp, root, opts)
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    local m = repeated("gather", out, inp, opts, root)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.gather"
    local dt, o, bytes, g = prepare(what, "gather", out, inp, opts, false)
    note("gather", what, out, inp, opts, root, g.size)
    root = root_of(what, root, g)
    local v = chunk_views(what, o, g.size, out, "out", inp, "inp")
    local in_place = own_chunk(out, inp, v, g)
    check_apart(what, out, inp, in_place)
    local _, grid, threads, bm, bn, staging = plan(what, "gather", dt, bytes, o, g, v.rows, v.cols,
      (v.rows == 1 and v.chunk_step == v.cols) and v.cols or nil)
    if staging then
      launch(kernel.builtin("ccl/gather").ccl_ll_gather, grid, threads, { inp, out, v.cols, DTYPE_CODE[dt.name], root,
        g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/gather").ccl_gather, grid, threads, { inp, out, v.rows, v.cols, v.plain_stride,
      v.chunked_stride, v.chunk_step, bm, bn, DTYPE_CODE[dt.name], o.dim, root, in_place, g.lo, g.hi, o.async, ctx })
    return out
  end

  -- Member i's out = chunk i (along dim) of root's inp. In place: out is this rank's own chunk of inp.
  function ccl.scatter(out, inp, root, opts)
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    local m = repeated("scatter", out, inp, opts, root)
    if m then
      again(m)
      return out
    end
    local what = "ctx.ccl.scatter"
    local dt, o, bytes, g = prepare(what, "scatter", out, inp, opts, false)
    note("scatter", what, out, inp, opts, root, g.size)
    root = root_of(what, root, g)
    local v = chunk_views(what, o, g.size, inp, "inp", out, "out")
    check_apart(what, out, inp, own_chunk(inp, out, v, g))
    local _, grid, threads, bm, bn, staging = plan(what, "scatter", dt, bytes, o, g, v.rows, v.cols,
      (v.rows == 1 and v.chunk_step == v.cols) and v.cols or nil)
    if staging then
      launch(kernel.builtin("ccl/scatter").ccl_ll_scatter, grid, threads, { inp, out, v.cols, DTYPE_CODE[dt.name], root,
        g.lo, g.hi, ctx })
      return out
    end
    launch(kernel.builtin("ccl/scatter").ccl_scatter, grid, threads, { inp, out, v.rows, v.cols, v.chunked_stride,
      v.plain_stride, v.chunk_step, bm, bn, DTYPE_CODE[dt.name], o.dim, root, g.lo, g.hi, o.async, ctx })
    return out
  end

  -- ---- point to point (device/iris/impl/ccl_p2p.hpp; docs/collectives.md, "Point to point") ------------
  -- Message k from one rank to another is the k-th send between them in that direction, and their k-th
  -- recv. A send of a message that fits a slot of the staging (variant ll) writes it into the receiver's
  -- inbox and waits for nothing but the slot (its recv two messages ago ended); a larger one is an error
  -- saying what to do, unless the caller asks for variant "pull", whose send waits for its recv.
  local P2P_OPTIONS = { send = { "variant", "blocks" }, recv = { "blocks" } }
  local P2P_BLOCKS = { gpu = 64, cpu = 4 }

  -- What a send or recv checks at the caller's line, and how it runs: the view (rows, columns, row
  -- stride), the dtype, the variant (a send's; a recv follows its send's) and the grid.
  local function p2p_plan(what, kind, t, peer, opts)
    check_tensor(what, "t", t, kind == "recv")
    if type(peer) ~= "number" or peer % 1 ~= 0 or peer < 0 or peer >= ctx.world_size then
      errors.raise("invalid_argument", "%s: peer must be a rank from 0 to %d, got %s", what, ctx.world_size - 1,
        describe(peer))
    end
    if opts ~= nil and (type(opts) ~= "table" or tensor.is_tensor(opts)) then
      errors.raise("invalid_argument", "%s: options must be a table such as {blocks = 4}, got %s", what, describe(opts))
    end
    opts = opts or {}
    errors.check_keys(opts, P2P_OPTIONS[kind], what)
    local blocks = opts.blocks and positive_integer(what, "blocks", opts.blocks, MAX_BLOCKS)
    local variant = opts.variant or "auto"
    if variant ~= "auto" and variant ~= "ll" and variant ~= "pull" then
      errors.raise("invalid_argument", "%s: variant must be \"auto\", \"ll\" or \"pull\", got %s", what, describe(variant))
    end
    local staging = M.staging(ctx)
    if not staging then
      errors.raise("invalid_argument", "%s: point to point travels through the staging iris.init reserves in heaps of "
        .. "at least %s; this heap has %s (iris.init{heap_size = ...})", what, human(STAGING_MIN_HEAP),
        human(ctx.heap_size))
    end
    local rows, cols, stride
    if t._contiguous then
      rows, cols, stride = 1, t._numel, t._numel
    else
      need_2d(what, "t", t)
      rows, cols, stride = rows_cols(t)
    end
    local dt = t._dt
    local words = math.ceil(t._numel * dt.size / 8)
    if variant == "auto" then variant = "ll" end
    if kind == "send" and variant == "ll" and words > staging.words then
      errors.raise("invalid_argument", "%s: %s is more than one message holds (%s: a slot of the staging, which "
        .. "grows with the heap, this one of %s); send it in pieces of at most that, give iris.init a larger heap, "
        .. "or pass variant = \"pull\" (such a send waits until rank %d's recv has copied it, so rank %d must not be "
        .. "waiting to send to this rank first)", what, human(t._numel * dt.size), human(staging.words * 8),
        human(ctx.heap_size), peer, peer)
    end
    if kind == "send" and variant == "pull" and peer == ctx.rank then
      errors.raise("invalid_argument", "%s: variant \"pull\" waits for its recv, which this rank makes after it: "
        .. "a message to this rank itself goes as variant \"ll\" (in pieces of at most %s)", what,
        human(staging.words * 8))
    end
    if peer ~= ctx.rank then errors.check(C.iris_comm_require_every_rank(what)) end
    local threads = math.min(ONE_WAY_THREADS[device_class], math.max(32, math.ceil(words / 32) * 32))
    local cap = blocks or (words > staging.words and 2 or 1) * P2P_BLOCKS[device_class]
    local grid = math.max(1, math.min(cap, math.ceil(words / threads / ONE_WAY_WORDS_PER_THREAD[device_class])))
    if kind == "send" and variant == "pull" then grid, threads = 1, 32 end -- the header alone
    if C.iris_log_enabled(0) ~= 0 then
      ctx:debug("%s: %s %s %s rank %d: %s, %d block%s of %d threads", what, human(t._numel * dt.size), dt.name,
        kind == "send" and "to" or "from", peer, kind == "send" and variant or "as its send says", grid,
        grid == 1 and "" or "s", threads)
    end
    traced = trace.state.on and { what = what, args = { variant = kind == "send" and variant or nil,
      bytes = t._numel * dt.size, dtype = dt.name, peer = peer, blocks = grid } } or nil
    return rows, cols, stride, dt, variant, grid, threads
  end

  -- t to rank `peer`'s matching recv.
  function ccl.send(t, peer, opts)
    local m = repeated("send", t, nil, opts, peer)
    if m then
      again(m)
      return t
    end
    local what = "ctx.ccl.send"
    note("send", what, t, nil, opts, peer, peer == ctx.rank and 1 or 2)
    local rows, cols, stride, dt, variant, grid, threads = p2p_plan(what, "send", t, peer, opts)
    launch_uncounted(kernel.builtin("ccl/send").ccl_send, grid, threads, { t, rows, cols, stride, DTYPE_CODE[dt.name], peer,
      VARIANT_CODE[variant], ctx })
    return t
  end

  -- t := the message of rank `peer`'s matching send (the same elements and dtype).
  function ccl.recv(t, peer, opts)
    local m = repeated("recv", t, nil, opts, peer)
    if m then
      again(m)
      return t
    end
    local what = "ctx.ccl.recv"
    note("recv", what, t, nil, opts, peer, peer == ctx.rank and 1 or 2)
    local rows, cols, stride, dt, _, grid, threads = p2p_plan(what, "recv", t, peer, opts)
    launch_uncounted(kernel.builtin("ccl/recv").ccl_recv, grid, threads, { t, rows, cols, stride, DTYPE_CODE[dt.name], peer, ctx })
    return t
  end

  -- A job over several nodes: calls whose members span nodes run hierarchically (iris.ccl_nodes).
  if ctx.nodes > 1 then return require("iris.ccl_nodes").wrap_ccl(ctx, ccl) end
  return ccl
end

-- What iris.ops checks alike.
M.check_tensor, M.describe, M.positive_integer, M.overlap, M.human = check_tensor, describe, positive_integer, overlap,
  human
M.read_group = read_group -- (iris.ccl_nodes: groups that span nodes)

return M
