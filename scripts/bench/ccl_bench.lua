-- ccl_bench: every ctx.ccl collective and variant over a range of sizes, against NCCL (cuda), RCCL (hip) or MPI (cpu) measured in the same run.
--   mpirun -np 2 iris-lua scripts/bench/ccl_bench.lua [--min SIZE] [--max SIZE] [--collective LIST] [--variant LIST]
--                                                     [--dtype DTYPE] [--repeats N] [--[no-]graph] [--plot FILE]
--                                                     [--csv FILE] [--json FILE]
--   mpirun -np 2 iris-lua scripts/bench/ccl_bench.lua --stress [N] [--seed N] [--collective LIST] [--variant LIST]
--                                                     [--inject skip|skip_replay|corrupt] (the checks' own test)
-- SIZE: bytes of the whole buffer as nccl-tests counts it (all_reduce, all_to_all, broadcast: the
-- tensor; all_gather: the output; reduce_scatter: the input), 4KiB to 1GiB by powers of 2 (cpu: to
-- 1MiB). LIST: comma-separated names.
--
-- What a line says (docs/perf.md, "How ccl_bench measures", tells how to read it):
--   eager us: a batch of back-to-back calls timed with device events, per call, the median over `repeats`
--     batches, the slowest rank's; issue us: the host's own time per call in the same batches (it does
--     not wait for the device), so a time close to its issue (marked *) is the host's pace, not the device's;
--   graph us: the same calls captured once (ctx:capture) and replayed (g:replay), per call;
--   bus bandwidth as nccl-tests computes it: size / time x 2(n-1)/n (all_reduce), (n-1)/n (all_gather,
--     reduce_scatter, all_to_all), 1 (broadcast);
--   the reference's columns (headed NCCL, RCCL or MPI) measured the same ways, and "x NCCL", "x graph":
--     its time over ours (above 1: ours is faster); n/a: not measurable, the reason above the table.
-- Every call of every batch, ours and the reference's, eager and replayed, has its own input and output
-- (the slots below): inputs hold values that depend on the rank and on the call, outputs are poisoned
-- first, and a kernel checks every element of every output after the batch, so a wrong or stale result
-- (a call that did not run, or delivered an older call's data) fails the run.
-- --stress [N] (default 10000) runs N back-to-back collectives of mixed collectives, variants, sizes,
-- groups, dtypes and reductions (random, the same on every rank, --seed) and checks every one.
-- --plot FILE draws bus bandwidth against size, a line per variant and one for the reference: into FILE
-- for one collective; for several, a figure each, FILE with "_<collective>" before its extension.
-- Rows are printed, and written to --csv/--json, as they are measured: a run stopped early keeps them.
-- A sweep that will take long says about how long before it starts.
local ffi = require "ffi"
local codes = require "iris.codes"
local errors = require "iris.errors"
local C = ffi.C

-- ---- the collectives measured ---------------------------------------------------------------------------
-- One entry per collective; its variants come from iris.codes (device/iris/impl/abi.h), with "auto" first.
-- For `count` elements of the whole buffer (a multiple of the members `w`):
--   shape(count, w)        the elements of a member's input and output, and the reference's count
--   call(ccl, out, inp, opts, root)
--   expect(n_out, w, index) what every element of member `index`'s output holds, for the check kernel:
--                          REDUCE (op over the members' inputs at offset + k), CHUNK (chunk k / chunk
--                          from that member's input at offset + k % chunk) or ROOT (the root's input at
--                          offset + k); then chunk and offset. nil: this member's output is not checked.
--   in_place               out is inp (the root's input, the others' output)
--   run(count, w)          the elements a one-way call carries in one slot of the staging
--   bus(w)                 nccl-tests' bus factor
local REDUCE, CHUNK, ROOT = 0, 1, 2
local COLLECTIVES = {
  all_reduce = {
    reducing = true,
    shape = function(count) return count, count, count end,
    call = function(ccl, out, inp, opts) ccl.all_reduce(out, inp, opts) end,
    expect = function() return REDUCE, 0, 0 end,
    run = function(count) return count end,
    bus = function(w) return 2 * (w - 1) / w end,
  },
  all_gather = {
    shape = function(count, w) return count / w, count, count / w end,
    call = function(ccl, out, inp, opts) ccl.all_gather(out, inp, opts) end,
    expect = function(n_out, w) return CHUNK, n_out / w, 0 end,
    run = function(count, w) return count / w end,
    bus = function(w) return (w - 1) / w end,
  },
  reduce_scatter = {
    reducing = true,
    shape = function(count, w) return count, count / w, count / w end,
    call = function(ccl, out, inp, opts) ccl.reduce_scatter(out, inp, opts) end,
    expect = function(n_out, _, index) return REDUCE, 0, index * n_out end,
    run = function(count, w) return count / w end,
    bus = function(w) return (w - 1) / w end,
  },
  all_to_all = {
    shape = function(count, w) return count, count, count / w end,
    call = function(ccl, out, inp, opts) ccl.all_to_all(out, inp, opts) end,
    expect = function(n_out, w, index) return CHUNK, n_out / w, index * n_out / w end,
    run = function(count, w) return count / w end,
    bus = function(w) return (w - 1) / w end,
  },
  broadcast = {
    in_place = true,
    shape = function(count) return count, count, count end,
    call = function(ccl, t, _, opts, root) ccl.broadcast(t, root, opts) end,
    expect = function() return ROOT, 0, 0 end,
    run = function(count) return count end,
    bus = function() return 1 end,
  },
}
local ORDER, UNMEASURED = {}, {} -- ctx.ccl's collectives in abi.h's order; those without an entry above
for _, c in ipairs(codes.collectives) do
  if c.family == "ccl" then
    local spec = COLLECTIVES[c.name]
    if spec then
      ORDER[#ORDER + 1] = c.name
      spec.variants = { "auto", unpack(c.variants) }
    else
      UNMEASURED[#UNMEASURED + 1] = c.name
    end
  end
end
-- Iris's comparison variants do an atomic (or a lock round trip) per element: past this size they
-- only make the sweep long.
local SLOW_VARIANT_MAX = { atomic = 64 * 1024 * 1024, spinlock = 64 * 1024 * 1024 }
local BATCH_SECONDS = 0.002 -- a timed batch lasts about this long ...
local MAX_CALLS = 256       -- ... in at most this many calls (the launch queue stays short of full)
local HOST_BOUND = 0.9      -- a time whose issue is at least this share of it is marked *
local MiB = 1024 * 1024

local options = iris.options(arg, {
  name = "ccl_bench",
  about = "every ctx.ccl collective and variant over a range of sizes, against NCCL, RCCL or MPI in the same run",
  options = {
    { "min", "4KiB", "smallest buffer (bytes of the whole buffer, as nccl-tests counts them)", type = "bytes" },
    { "max", "1MiB", "largest buffer; sizes double from --min", type = "bytes", gpu = "1GiB" },
    { "collective", table.concat(ORDER, ","), "collectives to measure", type = "list", choices = ORDER },
    { "variant", nil, "variants to measure (default: every variant)", type = "list" },
    { "dtype", "float32", "element type (the sweep's)", type = "string" },
    { "repeats", 5, "batches timed per measurement; the median is reported", type = "integer", min = 1 },
    { "graph", true, "also capture the calls (ours and the reference's) in a graph and time its replays",
      type = "boolean" },
    { "stress", nil, "instead of the sweep, N back-to-back collectives of mixed collectives, variants, sizes, "
      .. "groups, dtypes and reductions, every one checked", type = "integer", min = 1, bare = 10000 },
    { "seed", 1, "the stress mode's random choices (the same on every rank)", type = "integer", min = 1 },
    { "inject", nil, "make one result wrong on purpose, so that the run must fail (the bench's own test)",
      choices = { skip = "no rank makes one call of the first batch (stress: of the first window)",
        skip_replay = "no rank replays the first timed batch's graph", corrupt = "rank 0 changes an element of "
          .. "one output before it is checked" } },
    { "plot", nil, "draw bus bandwidth against size into FILE (.svg; .png where a converter is); several "
      .. "collectives: a figure each, FILE_<collective>.svg", type = "plot" },
  },
})
if not options then return end
if not codes.DTYPE[options.dtype] then
  iris.options.usage_error("--dtype '%s' is not one of %s", options.dtype, table.concat(codes.names(codes.dtypes), ", "))
end
local min_bytes, max_bytes = options.min, options.max
local repeats = options.repeats
local wanted = options.collective
local variants_wanted = options.variant
local stress_calls = options.stress
local W = iris.world_size()

-- The stress mode's messages: up to this many elements a member (its share of the whole buffer).
local STRESS_MAX_SHARE = options.gpu and 65536 or 1024
local STRESS_WINDOW = 64 -- calls issued back to back between two checks
-- The slots of a size: as many buffers as fit this budget (at least one), for at most MAX_CALLS calls.
local ROTATION_BYTES = options.gpu and 64 * MiB or 8 * MiB

-- The heap: the buffers measured, and enough that ctx.ccl's one-way staging (a sixteenth of the heap,
-- per rank 4 slots of up to 4 MiB of data for every rank) takes the messages measured, so the one-way
-- variants are measured where an application with such a heap would get them.
local largest = stress_calls and STRESS_MAX_SHARE * W * 8 or max_bytes -- the largest message
local staging_heap = 16 * W * 4 * (2 * math.min(largest, 4 * MiB) + 256)
local staging_most = W * 4 * (2 * 4 * MiB + 256)
local buffers = stress_calls and 24 * 2 * W * STRESS_MAX_SHARE * 8 or math.max(2 * max_bytes, ROTATION_BYTES)
local ctx = iris.init { heap_size = math.max(staging_heap, buffers + staging_most + 64 * MiB) }
local me = ctx.rank

local function human(bytes) return ffi.string(C.iris_human_bytes(bytes)) end

local every_rank = require("iris.broadcast")
-- The slowest rank's value (every rank gets it).
local function slowest(value) return every_rank.slowest(value, "ccl_bench: the slowest rank") end

local function median(list)
  table.sort(list)
  local n = #list
  return n % 2 == 1 and list[(n + 1) / 2] or (list[n / 2] + list[n / 2 + 1]) / 2
end

-- ---- the checks -----------------------------------------------------------------------------------------
-- Element j of rank r's input at call c is bench_value(j, r, c) % modulus: a small whole number, exact in
-- every dtype, and so is the reduction of the members' (modulus_of). Calls are numbered the same on
-- every rank (`calls_made`), so every rank knows what every peer sent. Outputs are poisoned first with
-- a value no result can have (NaN; -1 or the largest integer; the byte 2 for bool).
local checks = iris.compile [[
__device__ inline uint32_t bench_mix(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}
__device__ inline uint32_t bench_value(uint64_t j, uint32_t rank, uint64_t call, uint32_t modulus) {
  uint32_t x = bench_mix(uint32_t(j) + 0x9e3779b9u * (rank + 1));
  x = bench_mix(x ^ uint32_t(j >> 32) ^ bench_mix(uint32_t(call) + 0x632be5abu));
  x = bench_mix(x ^ uint32_t(call >> 32));
  return x % modulus;
}
__device__ inline float bench_nan() {
  union { uint32_t bits; float value; } nan;
  nan.bits = 0x7fc00000u;
  return nan.value;
}
__device__ inline void bench_store(void* p, uint64_t i, int dtype, uint32_t v, bool poison) {
  switch (dtype) {
    case IRIS_DTYPE_bool: static_cast<uint8_t*>(p)[i] = poison ? 2 : (v != 0); break;
    case IRIS_DTYPE_int8: static_cast<int8_t*>(p)[i] = poison ? -1 : int8_t(v); break;
    case IRIS_DTYPE_uint8: static_cast<uint8_t*>(p)[i] = poison ? 255 : uint8_t(v); break;
    case IRIS_DTYPE_int16: static_cast<int16_t*>(p)[i] = poison ? -1 : int16_t(v); break;
    case IRIS_DTYPE_int32: static_cast<int32_t*>(p)[i] = poison ? -1 : int32_t(v); break;
    case IRIS_DTYPE_uint32: static_cast<uint32_t*>(p)[i] = poison ? 0xffffffffu : v; break;
    case IRIS_DTYPE_int64: static_cast<int64_t*>(p)[i] = poison ? -1 : int64_t(v); break;
    case IRIS_DTYPE_uint64: static_cast<uint64_t*>(p)[i] = poison ? ~uint64_t(0) : uint64_t(v); break;
    case IRIS_DTYPE_float16: static_cast<iris::half*>(p)[i] = iris::half(poison ? bench_nan() : float(v)); break;
    case IRIS_DTYPE_bfloat16: static_cast<iris::bfloat16*>(p)[i] = iris::bfloat16(poison ? bench_nan() : float(v)); break;
    case IRIS_DTYPE_float32: static_cast<float*>(p)[i] = poison ? bench_nan() : float(v); break;
    default: static_cast<double*>(p)[i] = poison ? double(bench_nan()) : double(v); break;
  }
}
__device__ inline double bench_load(const void* p, uint64_t i, int dtype) {
  switch (dtype) {
    case IRIS_DTYPE_bool: return static_cast<const uint8_t*>(p)[i];
    case IRIS_DTYPE_int8: return static_cast<const int8_t*>(p)[i];
    case IRIS_DTYPE_uint8: return static_cast<const uint8_t*>(p)[i];
    case IRIS_DTYPE_int16: return static_cast<const int16_t*>(p)[i];
    case IRIS_DTYPE_int32: return static_cast<const int32_t*>(p)[i];
    case IRIS_DTYPE_uint32: return static_cast<const uint32_t*>(p)[i];
    case IRIS_DTYPE_int64: return double(static_cast<const int64_t*>(p)[i]);
    case IRIS_DTYPE_uint64: return double(static_cast<const uint64_t*>(p)[i]);
    case IRIS_DTYPE_float16: return float(static_cast<const iris::half*>(p)[i]);
    case IRIS_DTYPE_bfloat16: return float(static_cast<const iris::bfloat16*>(p)[i]);
    case IRIS_DTYPE_float32: return static_cast<const float*>(p)[i];
    default: return static_cast<const double*>(p)[i];
  }
}
// `slots` runs of n elements: run s holds rank's input of call + s (or the poison).
__global__ void bench_fill(void* p, int dtype, uint64_t n, uint32_t slots, uint32_t rank, uint64_t call,
                           uint32_t modulus, bool poison) {
  const uint64_t total = n * slots;
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < total; e += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t s = e / n;
    bench_store(p, e, dtype, bench_value(e - s * n, rank, call + s, modulus), poison);
  }
}
// Compares `slots` runs of n output elements with what call + s must have left there; counts the wrong
// ones in bad[0], the first one found (call, element, value, expected) in first.
__global__ void bench_check(const void* p, int dtype, uint64_t n, uint32_t slots, uint64_t call, uint32_t modulus,
                            int mode, uint64_t chunk, uint64_t offset, uint32_t members_lo, uint32_t members_hi,
                            int root, int op, uint32_t* bad, double* first) {
  const uint64_t members = uint64_t(members_lo) | uint64_t(members_hi) << 32;
  const uint64_t total = n * slots;
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < total; e += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t s = e / n, k = e - s * n, c = call + s;
    double want = 0;
    if (mode == 0) {  // the op over every member
      bool any = false;
      for (uint32_t r = 0; r < 64; ++r) {
        if (!(members >> r & 1)) continue;
        const double v = bench_value(offset + k, r, c, modulus);
        if (!any) want = v;
        else if (op == IRIS_REDUCTION_max) want = v > want ? v : want;
        else if (op == IRIS_REDUCTION_min) want = v < want ? v : want;
        else want += v;
        any = true;
      }
      if (dtype == IRIS_DTYPE_bool) want = want != 0 ? 1 : 0;  // sum and max are or, min is and
    } else if (mode == 1) {  // chunk k / chunk comes from that member
      const uint64_t index = k / chunk;
      uint32_t r = 0;
      for (uint64_t seen = 0; r < 64; ++r) {
        if (!(members >> r & 1)) continue;
        if (seen++ == index) break;
      }
      want = bench_value(offset + (k - index * chunk), r, c, modulus);
    } else {
      want = bench_value(offset + k, uint32_t(root), c, modulus);
    }
    const double got = bench_load(p, e, dtype);
    if (!(got == want) && atomicAdd(bad, 1u) == 0) {
      first[0] = double(c);
      first[1] = double(k);
      first[2] = got;
      first[3] = want;
    }
  }
}
]]

-- The whole numbers below `modulus` whose reduction over `w` members stays exact in `dtype` (sums of
-- integers: float16 to 2048, bfloat16 to 256; int8 to 127; uint8 below its poison, 255).
local EXACT = { bool = 1, int8 = 127, uint8 = 254, int16 = 32767, float16 = 2048, bfloat16 = 256 }
local function modulus_of(dtype, w)
  if dtype == "bool" then return 2 end
  return math.floor((EXACT[dtype] or 65536) / w) + 1
end

local bad = ctx:zeros(1, "uint32")
local first = ctx:zeros(4, "float64")
local calls_made = 0 -- calls numbered so far (the same on every rank)

local function grid_for(total)
  return { grid = math.max(1, math.min(iris.cdiv(total, 256), ctx.backend == "cpu" and 16 or 1024)), block = 256 }
end

-- Writes `slots` runs of n elements into t (from its first): this rank's inputs of the calls from `call`
-- on, as rank `rank` would send them; or the poison.
local function fill(t, dtype, n, slots, rank, call, modulus, poison)
  if n * slots == 0 then return end
  checks.bench_fill:launch(grid_for(n * slots), t, codes.DTYPE[dtype], n, slots, rank, call, modulus, poison)
end

-- The members of a group as the check kernel takes them: two 32-bit masks.
local function masks(members)
  local lo, hi = 0, 0
  for _, r in ipairs(members) do
    if r < 32 then lo = lo + 2 ^ r else hi = hi + 2 ^ (r - 32) end
  end
  return lo, hi
end

-- Launches the check of `slots` runs of n elements of t (from its first), the outputs of the calls from
-- `call` on, as `e` (what expect gave, the members, root, op, modulus) says.
local function check(t, dtype, n, slots, call, e)
  if n * slots == 0 or not e.mode then return end
  checks.bench_check:launch(grid_for(n * slots), t, codes.DTYPE[dtype], n, slots, call, e.modulus, e.mode, e.chunk,
    e.offset, e.lo, e.hi, e.root or 0, codes.REDUCTION[e.op or "sum"], bad, first)
end

-- Collective: whether every output checked since the last verdict was right, on every rank. When one was
-- not, every rank raises the message of the first rank that found it; `describe(call)` names a call.
local function verdict(describe)
  local wrong = bad:get(1)
  local mine
  if wrong > 0 then
    local f = first:to_table()
    mine = ("rank %d: %s: %d wrong element%s; the first found: element %d is %s, expected %s (the call's result "
      .. "is wrong, or stale: an older call's, or none)"):format(me, describe(f[1]), wrong, wrong == 1 and "" or "s",
      f[2] + 1, tostring(f[3]), tostring(f[4]))
  end
  local all = every_rank.from_every_rank(mine or false, "ccl_bench: were the results right?")
  for r = 0, W - 1 do
    if all[r] then errors.raise("invalid_argument", "ccl_bench: a wrong result, %s", all[r]) end
  end
end

-- --inject corrupt: rank 0 changes one element of `t` (the first output of ctx.ccl checked) after its calls.
local function corrupt(t)
  if options.inject ~= "corrupt" then return end
  options.inject = nil
  ctx:synchronize()
  if me == 0 then t:set(1, t:get(1) == 1 and 0 or 1) end
end

-- ---- timing ---------------------------------------------------------------------------------------------

local timer = ffi.gc((function()
  local out = ffi.new("iris_timer*[1]")
  errors.check(C.iris_timer_create(out))
  return out[0]
end)(), C.iris_timer_destroy)
local elapsed = ffi.new("double[1]")

-- fn() timed: device milliseconds (events around it on this rank's stream) and the host's milliseconds
-- to issue it (the host does not wait inside).
local function timed(fn)
  errors.check(C.iris_timer_start(timer))
  local t0 = C.iris_trace_now()
  fn()
  local host_ms = tonumber(C.iris_trace_now() - t0) * 1e-6
  errors.check(C.iris_timer_stop(timer, elapsed))
  return elapsed[0], host_ms
end

-- ---- one size of one collective ---------------------------------------------------------------------------

-- The buffers of `count` elements of the whole buffer: `slots` inputs and outputs (views of one tensor
-- each, consecutive), and what the checks need.
local function size_buffers(collective, count, dtype)
  local spec = COLLECTIVES[collective]
  local n_in, n_out, ref_count = spec.shape(count, W)
  local element = codes.dtype[dtype].size
  local set = (spec.in_place and 0 or n_in * element) + n_out * element
  local slots = math.max(1, math.min(MAX_CALLS, math.floor(ROTATION_BYTES / set)))
  local out = ctx:zeros(slots * n_out, dtype)
  local inp = spec.in_place and out or ctx:zeros(slots * n_in, dtype)
  local b = { collective = collective, spec = spec, count = count, dtype = dtype, n_in = n_in, n_out = n_out,
    ref_count = ref_count, slots = slots, inp = inp, out = out, inps = {}, outs = {} }
  for s = 1, slots do
    b.outs[s] = out:narrow(1, (s - 1) * n_out + 1, n_out)
    b.inps[s] = spec.in_place and b.outs[s] or inp:narrow(1, (s - 1) * n_in + 1, n_in)
  end
  local members = {}
  for r = 0, W - 1 do members[r + 1] = r end
  local mode, chunk, offset = spec.expect(n_out, W, me)
  local lo, hi = masks(members)
  b.expect = { mode = mode, chunk = chunk, offset = offset, lo = lo, hi = hi, root = 0, op = "sum",
    modulus = modulus_of(dtype, W) }
  return b
end

-- Before calls `call` .. call + slots - 1: their inputs (an in-place collective's: the root's input, the
-- poison elsewhere), and the others' outputs poisoned.
local function prepare(b, call, slots)
  local e = b.expect
  if b.spec.in_place then
    fill(b.out, b.dtype, b.n_out, slots, 0, call, e.modulus, me ~= e.root)
  else
    fill(b.inp, b.dtype, b.n_in, slots, me, call, e.modulus, false)
    fill(b.out, b.dtype, b.n_out, slots, 0, call, e.modulus, true)
  end
end

-- `calls` (a function of the slot: one call) measured: eager batches, then (graph) the same calls
-- captured and replayed. Every batch is prepared, timed and checked. Returns { us, issue_us, calls,
-- graph_us, graph_issue_us } (microseconds per call, slowest rank) and why there is no graph figure.
-- `ours`: ctx.ccl's calls, the ones --inject spoils (the reference's are checked the same way).
local function measure(b, label, call, graph, ours)
  local function describe(c) return ("%s, call %d of the run"):format(label, c) end
  local injected_skip = ours and options.inject == "skip"
  if injected_skip then options.inject = nil end
  -- One batch of `slots` calls: prepared, run by `run`, checked; device and host ms.
  local function batch(slots, run)
    local base = calls_made
    calls_made = calls_made + slots
    prepare(b, base, slots)
    ctx:barrier()
    local device_ms, host_ms = timed(run)
    if ours then corrupt(b.outs[1]) end
    check(b.out, b.dtype, b.n_out, slots, base, b.expect)
    verdict(describe)
    return device_ms, host_ms
  end
  local function eager(slots)
    return function()
      for s = 1, slots do
        if not (injected_skip and s == 1) then call(s) end
      end
      injected_skip = false
    end
  end
  -- the first batch: compiles, warms, and tells how many calls make a batch of about BATCH_SECONDS
  local probe = math.min(b.slots, 8)
  local probe_ms = batch(probe, eager(probe))
  local slots = ctx:broadcast(math.max(1, math.min(b.slots, math.floor(BATCH_SECONDS * 1e3 / math.max(probe_ms / probe,
    1e-4)))), 0)
  -- One batch more, not timed: LuaJIT records a call path's traces over its first hundred or so calls,
  -- which the probe's few do not reach (the first row of a run was 3 to 10 x slower than the next, ours
  -- and NCCL's alike; docs/perf.md, "Eager calls after the launch left unpack()").
  batch(slots, eager(slots))
  local device, host = {}, {}
  for r = 1, repeats do
    local d, h = batch(slots, eager(slots))
    device[r], host[r] = d / slots, h / slots
  end
  local result = { calls = slots, us = slowest(median(device)) * 1e3, issue_us = slowest(median(host)) * 1e3 }
  if graph ~= true then return result, graph end
  local ok, g = pcall(ctx.capture, ctx, function()
    for s = 1, slots do call(s) end
  end)
  if not ok then return result, tostring(g) end
  local skip_replay = ours and options.inject == "skip_replay"
  if skip_replay then options.inject = nil end
  batch(slots, function() g:replay(1) end) -- warm
  device, host = {}, {}
  for r = 1, repeats do
    local d, h = batch(slots, function()
      if not skip_replay then g:replay(1) end
      skip_replay = false
    end)
    device[r], host[r] = d / slots, h / slots
  end
  g:free()
  result.graph_us, result.graph_issue_us = slowest(median(device)) * 1e3, slowest(median(host)) * 1e3
  return result
end

-- ---- the reference ----------------------------------------------------------------------------------------

local library = require "iris.reference"
local reference = library.open(ctx)
-- Why the reference's calls are not replayed in a graph (nil: they are).
local reference_graph_why = reference.name == "MPI" and "MPI waits on the host: its calls cannot be captured"
  or not reference.handle and "no reference" or nil

local function reference_call(b)
  local collective, ref_count, dtype = b.collective, b.ref_count, b.dtype
  return function(s) library.run(reference, collective, b.inps[s], b.outs[s], ref_count, dtype, "sum", 0) end
end

-- ---- the sweep --------------------------------------------------------------------------------------------

-- The one-way variants take what fits a slot of the staging (ctx.ccl's, docs/collectives.md "One way"):
-- each member's message, its chunk (reduce_scatter, all_to_all, all_gather's input), or for ll_two_shot
-- a member's share of the message.
local staging = require("iris.ccl").staging(ctx)
local function one_way_fits(collective, variant, count, dtype, w)
  if variant ~= "ll" and variant ~= "ll_two_shot" then return true end
  if not staging then return false end
  local words = math.ceil(COLLECTIVES[collective].run(count, w) * codes.dtype[dtype].size / 8)
  if variant == "ll_two_shot" then words = math.ceil(words / w) end
  return words <= staging.words
end

-- The variants of `collective` asked for (--variant), in the table's order.
local function variants_of(collective)
  local list = {}
  for _, v in ipairs(COLLECTIVES[collective].variants) do
    if not variants_wanted then
      list[#list + 1] = v
    else
      for _, w in ipairs(variants_wanted) do if w == v then list[#list + 1] = v end end
    end
  end
  return list
end

local function ours_call(b, variant)
  local call, ccl, opts = b.spec.call, ctx.ccl, variant ~= "auto" and { variant = variant } or nil
  return function(s) call(ccl, b.outs[s], b.inps[s], opts, 0) end
end

-- The table, printed by rank 0 a row at a time as they are measured (a header before each collective), and
-- the rows written to --csv/--json as they come (iris.options.writer): a run stopped early keeps them.
local rows = {} -- for --plot
local output = iris.options.writer(options, {
  columns = { "collective", "dtype", "ranks", "backend", "bytes", "variant", "calls", "time_us", "issue_us",
    "busbw_gbs", "host_bound", "graph_time_us", "graph_issue_us", "graph_busbw_gbs", "reference", "reference_time_us",
    "reference_issue_us", "reference_busbw_gbs", "x_reference", "reference_graph_time_us", "reference_graph_issue_us",
    "reference_graph_busbw_gbs", "x_reference_graph" },
  setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, reference = reference.name,
    graph = options.graph },
})

-- The reference's columns are headed by its name; "n/a" where nothing could be measured, the reason in the
-- lines above the table (or a warning for one size).
local REF = reference.name ~= "none" and reference.name or "ref"
local LINE = "%-14s %10s  %-11s %10s %9s %11s  %10s %10s %7s  %10s %11s %8s"
local function us_text(v, issue)
  if not v then return "n/a" end
  return ("%.2f%s"):format(v, issue and issue >= HOST_BOUND * v and "*" or "")
end
local function number_text(v) return v and ("%.2f"):format(v) or "n/a" end

local printed_collective
local function print_row(row)
  if me ~= 0 then return end
  if row.collective ~= printed_collective then
    printed_collective = row.collective
    print()
    print(LINE:format(row.collective, "size", "variant", "eager us", "issue us", "busbw GB/s", REF .. " us",
      REF .. " GB/s", "x " .. REF, "graph us", REF .. " graph", "x graph"))
  end
  print(LINE:format("", human(row.bytes), row.variant, us_text(row.time_us, row.issue_us), number_text(row.issue_us),
    number_text(row.busbw_gbs), us_text(row.reference_time_us, row.reference_issue_us),
    number_text(row.reference_busbw_gbs), number_text(row.x_reference), us_text(row.graph_time_us, row.graph_issue_us),
    us_text(row.reference_graph_time_us, row.reference_graph_issue_us), number_text(row.x_reference_graph)))
  io.stdout:flush()
end

local function per(bytes, factor, us) return us and bytes / (us * 1e-6) / 1e9 * factor end

local function record(collective, bytes, variant, dtype, ours, ref)
  local factor = COLLECTIVES[collective].bus(W)
  local row = { collective = collective, dtype = dtype, ranks = W, backend = ctx.backend, bytes = bytes,
    variant = variant, calls = ours.calls, time_us = ours.us, issue_us = ours.issue_us,
    busbw_gbs = per(bytes, factor, ours.us), host_bound = ours.issue_us >= HOST_BOUND * ours.us,
    graph_time_us = ours.graph_us, graph_issue_us = ours.graph_issue_us, graph_busbw_gbs = per(bytes, factor, ours.graph_us),
    reference = reference.name, reference_time_us = ref and ref.us, reference_issue_us = ref and ref.issue_us,
    reference_busbw_gbs = ref and per(bytes, factor, ref.us), reference_graph_time_us = ref and ref.graph_us,
    reference_graph_issue_us = ref and ref.graph_issue_us,
    reference_graph_busbw_gbs = ref and per(bytes, factor, ref.graph_us),
    x_reference = ref and ref.us / ours.us, x_reference_graph = ref and ref.graph_us and ours.graph_us
      and ref.graph_us / ours.graph_us }
  rows[#rows + 1] = row
  print_row(row)
  output:add(row)
end

-- How long the sweep will take, said before it starts when that is long: one call of all_reduce timed at
-- the smallest and the largest size (times in between grow with the bytes); each measurement costs about
-- 7 calls plus `repeats` batches of at least BATCH_SECONDS, twice with graphs (eager and replayed).
local LONG_SWEEP = 20 -- seconds: a sweep expected to take longer says so first
local function say_how_long(plan, steps, element)
  if steps == 0 then return end
  local function one_call(bytes)
    local count = math.max(W, math.floor(bytes / element / W) * W)
    local t = ctx:ones(count, options.dtype)
    ctx.ccl.all_reduce(t, t)
    local ms = slowest(iris.bench(function() ctx.ccl.all_reduce(t, t) end, { warmup = 1, iters = 3 }).median_ms)
    t:free()
    return ms / 1e3
  end
  local small, large = one_call(min_bytes), one_call(max_bytes)
  local total = 0
  for _, step in ipairs(plan) do
    local bytes = step.count * element
    local share = max_bytes > min_bytes and (bytes - min_bytes) / (max_bytes - min_bytes) or 1
    local call = small + (large - small) * math.max(0, share)
    local measurements = #step.variants + (reference.handle and 1 or 0)
    total = total + measurements * (7 * call + repeats * math.max(BATCH_SECONDS, call)) * (options.graph and 2 or 1)
  end
  if me == 0 and total > LONG_SWEEP then
    print(("ccl_bench: %d measurements up to %s will take about %d s on the %s backend; rows appear as they are "
      .. "measured%s"):format(steps, human(max_bytes), math.ceil(total), ctx.backend,
      ctx.backend == "cpu" and " (--max 1MiB, the default on cpu, takes seconds)" or ""))
    io.stdout:flush()
  end
end

local function header(what)
  print(("%s on %d rank%s, backend %s (%s), %s; reference: %s%s"):format(what, W, W == 1 and "" or "s", ctx.backend,
    ctx.device_name, stress_calls and "every dtype" or options.dtype, reference.name,
    reference.why and (" (" .. reference.why .. ")") or ""))
  if #UNMEASURED > 0 then
    print(("not measured here: %s (scripts/bench/ccl_rooted_bench.lua measures them)")
      :format(table.concat(UNMEASURED, ", ")))
  end
end

local graph_why -- why graphs were left out (the first reason met), for the legend and after the table

-- What the columns are (rank 0, before the table).
-- (Printed before the sweep: a graph left out during it says why after the table.)
local function print_legend()
  local ref = REF
  print(("eager: device events around up to %d back-to-back calls, per call (median of %d batches, slowest rank); "
    .. "issue: the host's time per call in them, without waiting; * the host set the pace (issue >= %d%% of the "
    .. "time)"):format(MAX_CALLS, repeats, HOST_BOUND * 100))
  print(("graph: the same calls captured once (ctx:capture) and replayed (g:replay), per call%s%s")
    :format(not options.graph and "; n/a: not measured (--no-graph)" or "",
      reference.name ~= "none" and reference_graph_why and (("; %s graph n/a: %s"):format(ref, reference_graph_why)) or ""))
  print(("checked: every call of every batch, eager and replayed, ours and %s's, has inputs that depend on the rank "
    .. "and the call; every output element is compared after the batch"):format(ref == "ref" and "the reference" or ref))
end

local function sweep()
  local dtype = options.dtype
  local element = codes.dtype[dtype].size
  -- What will be measured: per collective, its variants and the sizes (each as the bytes actually moved).
  local plan, steps = {}, 0
  for _, collective in ipairs(wanted) do
    local variants = variants_of(collective)
    local bytes = min_bytes
    while bytes <= max_bytes do
      local count = math.floor(bytes / element / W) * W -- divisible among the ranks
      if count > 0 then
        local measured = {}
        for _, variant in ipairs(variants) do
          if count * element <= (SLOW_VARIANT_MAX[variant] or math.huge) and one_way_fits(collective, variant, count,
            dtype, W) then
            measured[#measured + 1] = variant
          end
        end
        plan[#plan + 1] = { collective = collective, count = count, variants = measured }
        steps = steps + #measured + (reference.handle and 1 or 0)
      end
      bytes = bytes * 2
    end
  end

  say_how_long(plan, steps, element)
  if me == 0 then
    header("ctx.ccl")
    print_legend()
  end

  local progress = iris.progress(steps)
  for _, step in ipairs(plan) do
    local collective, count = step.collective, step.count
    local actual = count * element
    local b = size_buffers(collective, count, dtype)
    local ref
    if reference.handle then
      progress:step("%s %s, %s", collective, human(actual), reference.name)
      local label = ("%s %s %s (%s)"):format(reference.name, collective, human(actual), dtype)
      local ok, result, why = pcall(measure, b, label, reference_call(b), options.graph and not reference_graph_why)
      if ok then
        ref = result
        if why and me == 0 then ctx:warning("%s %s graph: %s", reference.name, collective, why) end
      elseif tostring(result):find("ccl_bench: a wrong result", 1, true) then
        error(result, 0)
      else
        if me == 0 then ctx:warning("%s %s: %s", reference.name, collective, tostring(result)) end
      end
    end
    for _, variant in ipairs(step.variants) do
      progress:step("%s %s, %s", collective, human(actual), variant)
      local label = ("ctx.ccl.%s %s %s (%s)"):format(collective, variant, human(actual), dtype)
      local result, why = measure(b, label, ours_call(b, variant), options.graph, true)
      if why and not graph_why then graph_why = why end
      progress:finish() -- (clears a terminal's progress line before the row)
      record(collective, actual, variant, dtype, result, ref)
    end
    b.out:free()
    if b.inp ~= b.out then b.inp:free() end
  end
  progress:finish()
end

-- ---- the stress mode --------------------------------------------------------------------------------------

local stress_rows = {}
local function stress(n)
  -- The same choices on every rank: a Park-Miller generator (exact in doubles).
  local state = options.seed
  local function pick(k)
    state = state * 16807 % 2147483647
    return state % k + 1
  end
  local dtypes = codes.names(codes.dtypes)
  local pool_elements = 2 * W * STRESS_MAX_SHARE
  local pools = {}
  for _, dtype in ipairs(dtypes) do
    pools[dtype] = { inp = ctx:zeros(pool_elements, dtype), out = ctx:zeros(pool_elements, dtype), used_in = 0,
      used_out = 0 }
  end
  local shares = {}
  for _, m in ipairs { 1, 2, 3, 5, 8, 16, 31, 64, 100, 255, 256, 1000, 1024, 4099, 16384, 65536 } do
    if m <= STRESS_MAX_SHARE then shares[#shares + 1] = m end
  end
  local ops = { "sum", "max", "min" }
  local made, window, summary, order = 0, {}, {}, {}
  local skip_one = options.inject == "skip"
  if skip_one then options.inject = nil end

  local function describe_call(c)
    for _, x in ipairs(window) do
      if x.call == c then
        return ("stress call %d: ctx.ccl.%s, variant %s, %d %s elements (the whole buffer), %s%s%s"):format(c - x.base
          + 1, x.collective, x.variant, x.count, x.dtype, x.group and ("group {" .. table.concat(x.group, ", ") .. "}")
          or "every rank", x.op and (", op " .. x.op) or "", x.in_place and ", in place" or "")
      end
    end
    return ("stress call numbered %d"):format(c)
  end

  -- The window's calls, back to back, between their inputs and their checks.
  local function flush()
    for _, x in ipairs(window) do
      if x.member then
        if x.in_place then
          fill(x.out, x.dtype, x.n_out, 1, x.sender, x.call, x.expect.modulus, x.poisoned)
        else
          fill(x.inp, x.dtype, x.n_in, 1, me, x.call, x.expect.modulus, false)
          fill(x.out, x.dtype, x.n_out, 1, 0, x.call, x.expect.modulus, true)
        end
      end
    end
    for i, x in ipairs(window) do
      if x.member and not (skip_one and i == 1) then x.spec.call(ctx.ccl, x.out, x.inp, x.opts, x.root) end
    end
    skip_one = false
    if window[1] then corrupt(window[1].out) end
    for _, x in ipairs(window) do
      if x.member then check(x.out, x.dtype, x.n_out, 1, x.call, x.expect) end
    end
    verdict(describe_call)
    window = {}
    for _, p in pairs(pools) do p.used_in, p.used_out = 0, 0 end
  end

  local started = C.iris_trace_now()
  for i = 1, n do
    local collective = wanted[pick(#wanted)]
    local spec = COLLECTIVES[collective]
    local dtype = dtypes[pick(#dtypes)]
    -- the group: every rank half the time, else a random subset (possibly of one rank)
    local group, members = nil, {}
    if W > 1 and pick(2) == 1 then
      group = {}
      for r = 0, W - 1 do
        if pick(2) == 1 then group[#group + 1] = r end
      end
      if #group == 0 then group[1] = pick(W) - 1 end
      members = group
    else
      for r = 0, W - 1 do members[r + 1] = r end
    end
    local w, index = #members, nil
    for k, r in ipairs(members) do if r == me then index = k - 1 end end
    local modulus = modulus_of(dtype, w)
    -- enough elements that an older call's values cannot pass for this one's (below 2^-32)
    local least = math.ceil(32 / (math.log(modulus) / math.log(2)))
    local count
    repeat count = shares[pick(#shares)] * w until count >= least * w or count == shares[#shares] * w
    local variants = {}
    for _, v in ipairs(variants_of(collective)) do
      if one_way_fits(collective, v, count, dtype, w) then variants[#variants + 1] = v end
    end
    if #variants == 0 then variants = { "auto" } end
    local variant = variants[pick(#variants)]
    local op = spec.reducing and ops[pick(#ops)] or nil
    local root = members[pick(w)]
    local in_place = spec.in_place or (collective == "all_reduce" and pick(4) == 1)
    local n_in, n_out = spec.shape(count, w)
    local pool = pools[dtype]
    if pool.used_in + n_in > pool_elements or pool.used_out + n_out > pool_elements or #window == STRESS_WINDOW then
      flush()
    end
    local out = pool.out:narrow(1, pool.used_out + 1, n_out)
    local inp = in_place and out or pool.inp:narrow(1, pool.used_in + 1, n_in)
    pool.used_out, pool.used_in = pool.used_out + n_out, pool.used_in + (in_place and 0 or n_in)
    local x = { call = calls_made, base = calls_made - made, collective = collective, spec = spec, variant = variant,
      dtype = dtype, count = count, group = group, op = op, root = root, in_place = in_place, member = index ~= nil,
      inp = inp, out = out, n_in = n_in, n_out = n_out }
    calls_made, made = calls_made + 1, made + 1
    if x.member then
      local opts = { group = group, op = op }
      if variant ~= "auto" then opts.variant = variant end
      x.opts = opts
      local mode, chunk, offset = spec.expect(n_out, w, index)
      local lo, hi = masks(members)
      x.expect = { mode = mode, chunk = chunk, offset = offset, lo = lo, hi = hi, root = root, op = op or "sum",
        modulus = modulus }
      -- in place: the root's input (broadcast) or this rank's (all_reduce); the poison for broadcast's others
      x.sender = collective == "broadcast" and root or me
      x.poisoned = collective == "broadcast" and me ~= root
    end
    window[#window + 1] = x
    local key = collective .. " " .. variant
    local s = summary[key]
    if not s then
      s = { collective = collective, variant = variant, calls = 0, subgroup_calls = 0, in_place_calls = 0,
        dtypes = {}, dtype_count = 0, min_elements = count, max_elements = count }
      summary[key] = s
      order[#order + 1] = key
    end
    s.calls = s.calls + 1
    if group then s.subgroup_calls = s.subgroup_calls + 1 end
    if in_place and collective ~= "broadcast" then s.in_place_calls = s.in_place_calls + 1 end
    if not s.dtypes[dtype] then s.dtypes[dtype], s.dtype_count = true, s.dtype_count + 1 end
    s.min_elements, s.max_elements = math.min(s.min_elements, count), math.max(s.max_elements, count)
    if i == n then flush() end
  end
  local seconds = tonumber(C.iris_trace_now() - started) * 1e-9
  local rank = {}
  for k, name in ipairs(ORDER) do rank[name] = k end
  table.sort(order, function(a, b)
    local x, y = summary[a], summary[b]
    if x.collective ~= y.collective then return rank[x.collective] < rank[y.collective] end
    return x.variant < y.variant
  end)
  for _, key in ipairs(order) do
    local s = summary[key]
    stress_rows[#stress_rows + 1] = { collective = s.collective, variant = s.variant, calls = s.calls,
      subgroup_calls = s.subgroup_calls, in_place_calls = s.in_place_calls, dtypes = s.dtype_count,
      min_elements = s.min_elements, max_elements = s.max_elements, wrong = 0 }
  end
  for _, p in pairs(pools) do
    p.inp:free()
    p.out:free()
  end
  return seconds
end

-- ---- the run and its report --------------------------------------------------------------------------------

-- --inject that found nothing to spoil (skip_replay without graphs) would let a run pass that must fail.
local function injected()
  if options.inject then
    errors.raise("invalid_argument", "ccl_bench: --inject %s found nothing to spoil (%s), so this run proves nothing",
      options.inject, options.graph and "no graph was replayed" or "--no-graph")
  end
end


-- Every ctx.ccl kernel the run launches compiled on every rank before the first collective: a rank
-- still compiling one (seconds on the cpu backend, with a cold kernel cache) leaves its peers waiting
-- inside a collective past IRIS_WAIT_TIMEOUT. The kernel cache makes this quick after the first run.
local kernel = require "iris.kernel"
for _, collective in ipairs(wanted) do kernel.builtin("ccl/" .. collective) end
ctx:barrier()

if stress_calls then
  local seconds = stress(stress_calls)
  injected()
  library.close(reference)
  if me == 0 then
    header("ccl_bench --stress: ctx.ccl")
    print(("%d collectives (seed %d), windows of up to %d back to back, %.2f s (%.3f ms a call with its fill and "
      .. "check): every result checked, none wrong"):format(stress_calls, options.seed, STRESS_WINDOW, seconds,
      seconds * 1e3 / stress_calls))
    print()
    print(("%-14s  %-11s %7s %9s %9s %7s %14s"):format("collective", "variant", "calls", "subgroup", "in place", "dtypes",
      "elements"))
    for _, r in ipairs(stress_rows) do
      print(("%-14s  %-11s %7d %9d %9d %7d %14s"):format(r.collective, r.variant, r.calls, r.subgroup_calls,
        r.in_place_calls, r.dtypes, r.min_elements .. ".." .. r.max_elements))
    end
  end
  iris.options.write(options, stress_rows, {
    columns = { "collective", "variant", "calls", "subgroup_calls", "in_place_calls", "dtypes", "min_elements",
      "max_elements", "wrong" },
    setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, seed = options.seed, calls = stress_calls },
  })
  return
end

sweep()
injected()
library.close(reference)
if graph_why and me == 0 then print(("\ngraph: n/a: %s"):format(graph_why)) end
-- The figure of each collective measured: bus bandwidth against size, a line per variant and the
-- reference's (rank 0).
local function plot_file(collective)
  if #wanted == 1 then return options.plot end
  local stem, extension = options.plot:match("^(.-)(%.[^./]*)$")
  return ("%s_%s%s"):format(stem or options.plot, collective, extension or "")
end

if options.plot and me == 0 then
  for _, collective in ipairs(wanted) do
    local series, by_variant, reference_line, seen = {}, {}, {}, {}
    for _, row in ipairs(rows) do
      if row.collective == collective then
        if not by_variant[row.variant] then
          by_variant[row.variant] = {}
          series[#series + 1] = { name = row.variant, points = by_variant[row.variant] }
        end
        table.insert(by_variant[row.variant], { row.bytes, row.busbw_gbs })
        if row.reference_busbw_gbs and not seen[row.bytes] then
          seen[row.bytes] = true
          reference_line[#reference_line + 1] = { row.bytes, row.reference_busbw_gbs }
        end
      end
    end
    if #reference_line > 0 then series[#series + 1] = { name = reference.name, points = reference_line } end
    if #series > 0 then
      local file = plot_file(collective)
      iris.plot.save(file, iris.plot.lines {
        title = ("ctx.ccl.%s%s, %d ranks, %s (%s backend)"):format(collective,
          reference.name ~= "none" and (" against " .. reference.name) or "", W, options.dtype, ctx.backend),
        x_label = "bytes (the whole buffer, as nccl-tests counts them)", y_label = "bus bandwidth GB/s",
        x_scale = "log2", x_text = iris.plot.bytes_text, series = series,
      })
      print(("plot: %s, %d lines drawn into %s"):format(collective, #series, file))
    end
  end
end

output:finish()
