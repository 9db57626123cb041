-- ccl_bench: every ctx.ccl collective and variant over a range of sizes, against NCCL (cuda), RCCL (hip) or MPI (cpu) measured in the same run.
--   mpirun -np 2 iris-lua scripts/bench/ccl_bench.lua [--min SIZE] [--max SIZE] [--collective LIST] [--variant LIST]
--                                                     [--dtype DTYPE] [--repeats N] [--plot FILE] [--csv FILE] [--json FILE]
-- SIZE: bytes of the whole buffer as nccl-tests counts it (all_reduce, all_to_all, broadcast: the
-- tensor; all_gather: the output; reduce_scatter: the input), 4KiB to 1GiB by powers of 2 (cpu: to
-- 1MiB). LIST: comma-separated names. Time: median over `repeats` batches of back-to-back calls (a
-- batch lasts about 2 ms), per call, the slowest rank's; bus bandwidth as nccl-tests computes it:
-- size / time x 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, all_to_all), 1 (broadcast).
-- "x ref": reference time / our time (above 1: faster than the reference). Results are checked.
-- --plot FILE draws bus bandwidth against size, a line per variant and one for the reference: into FILE
-- for one collective; for several, a figure each, FILE with "_<collective>" before its extension.
-- Rows are printed, and written to --csv/--json, as they are measured: a run stopped early keeps them.
-- A sweep that will take long says about how long before it starts.
local ffi = require "ffi"
local C = ffi.C

local COLLECTIVES = {
  all_reduce = { "auto", "ll", "ll_two_shot", "one_shot", "two_shot", "ring", "atomic", "spinlock" },
  all_gather = { "auto", "ll", "persistent", "partitioned" },
  reduce_scatter = { "auto", "ll", "two_shot" },
  all_to_all = { "auto", "ll", "push" },
  broadcast = { "auto", "ll", "push" },
}
local ORDER = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast" }
local BUS_FACTOR = {
  all_reduce = function(n) return 2 * (n - 1) / n end,
  all_gather = function(n) return (n - 1) / n end,
  reduce_scatter = function(n) return (n - 1) / n end,
  all_to_all = function(n) return (n - 1) / n end,
  broadcast = function() return 1 end,
}
-- Iris's comparison variants do an atomic (or a lock round trip) per element: past this size they
-- only make the sweep long.
local SLOW_VARIANT_MAX = { atomic = 64 * 1024 * 1024, spinlock = 64 * 1024 * 1024 }
local BATCH_SECONDS = 0.002

local options = iris.options(arg, {
  name = "ccl_bench",
  about = "every ctx.ccl collective and variant over a range of sizes, against NCCL, RCCL or MPI in the same run",
  options = {
    { "min", "4KiB", "smallest buffer (bytes of the whole buffer, as nccl-tests counts them)", type = "bytes" },
    { "max", "1MiB", "largest buffer; sizes double from --min", type = "bytes", gpu = "1GiB" },
    { "collective", table.concat(ORDER, ","), "collectives to measure", type = "list", choices = ORDER },
    { "variant", nil, "variants to measure (default: every variant)", type = "list" },
    { "dtype", "float32", "element type", type = "string" },
    { "repeats", 5, "batches timed per measurement; the median is reported", type = "integer", min = 1 },
    { "plot", nil, "draw bus bandwidth against size into FILE (.svg; .png where a converter is); several "
      .. "collectives: a figure each, FILE_<collective>.svg", type = "plot" },
  },
})
if not options then return end
local min_bytes, max_bytes = options.min, options.max
local repeats = options.repeats
local wanted = options.collective
local variants_wanted = options.variant

-- The buffers, and a heap large enough that ctx.ccl's one-way staging (a sixteenth of the heap, per rank
-- 4 slots of up to 4 MiB of data for every rank) takes the messages measured: the one-way variants are
-- measured where an application with such a heap would get them.
local MiB = 1024 * 1024
local staging_heap = 16 * iris.world_size() * 4 * (2 * math.min(max_bytes, 4 * MiB) + 256)
local ctx = iris.init { heap_size = math.max(2 * max_bytes + 64 * MiB, staging_heap) }
local W, me = ctx.world_size, ctx.rank
local dtype = options.dtype
local element = ctx:zeros(1, dtype):element_size()

local function human(bytes) return ffi.string(C.iris_human_bytes(bytes)) end

-- The slowest rank's value (every rank gets it).
local function slowest(value) return require("iris.broadcast").slowest(value, "ccl_bench: the slowest rank") end

-- Milliseconds per call of fn: batches of back-to-back calls, as many as last BATCH_SECONDS (rank
-- 0's estimate, so every rank makes the same calls), median over `repeats` batches.
local function time_per_call(fn)
  fn()
  local probe = iris.bench(fn, { warmup = 1, iters = 3 }).median_ms
  local calls = ctx:broadcast(math.max(1, math.min(1000, math.floor(BATCH_SECONDS * 1e3 / math.max(probe, 1e-4)))), 0)
  local batch = iris.bench(function() for _ = 1, calls do fn() end end, { warmup = 1, iters = repeats })
  return slowest(batch.median_ms / calls)
end

-- ---- the reference ----------------------------------------------------------------------------------

local library = require "iris.reference"
local reference = library.open(ctx)

local function reference_time(collective, send, recv, count, root)
  if not reference.handle then return nil end
  local function call() library.run(reference, collective, send, recv, count, dtype, "sum", root) end
  local ok, result = pcall(time_per_call, call)
  if not ok then
    if me == 0 then ctx:warning("%s %s: %s", reference.name, collective, tostring(result)) end
    return nil
  end
  return result
end

-- ---- one size of one collective ----------------------------------------------------------------------

-- The tensors (input, output) of `collective` for `count` elements in the whole buffer, and the count
-- as the reference library wants it.
local function buffers(collective, count)
  local per = count / W
  if collective == "all_gather" then return ctx:ones(per, dtype), ctx:zeros(count, dtype), per end
  if collective == "reduce_scatter" then return ctx:ones(count, dtype), ctx:zeros(per, dtype), per end
  if collective == "all_to_all" then return ctx:ones(count, dtype), ctx:zeros(count, dtype), per end
  if collective == "broadcast" then
    local t = ctx:ones(count, dtype)
    return t, t, count
  end
  return ctx:ones(count, dtype), ctx:zeros(count, dtype), count
end

local function run(collective, variant, inp, out)
  local opts = variant ~= "auto" and { variant = variant } or nil
  if collective == "broadcast" then return function() ctx.ccl.broadcast(out, 0, opts) end end
  local fn = ctx.ccl[collective]
  return function() fn(out, inp, opts) end
end

-- Every element of out after a call: W for the reductions of ones, 1 otherwise.
local function check(collective, variant, out)
  local expected = (collective == "all_reduce" or collective == "reduce_scatter") and W or 1
  local n = out:numel()
  for _, k in ipairs { 1, math.floor(n / 2) + 1, n } do
    local got = out:get(k)
    if got ~= expected then
      error(("%s %s: element %d is %s, expected %s (rank %d)"):format(collective, variant, k, tostring(got), expected, me))
    end
  end
end

local rows = {} -- for --plot
local output = iris.options.writer(options, {
  columns = { "collective", "dtype", "ranks", "backend", "bytes", "variant", "time_us", "busbw_gbs", "reference",
    "reference_time_us", "reference_busbw_gbs", "x_reference" },
  setting = { ranks = W, backend = ctx.backend, device = ctx.device_name, reference = reference.name },
})

-- The table, printed by rank 0 a row at a time as they are measured (a header before each collective).
local printed_collective
local function print_row(row)
  if me ~= 0 then return end
  if row.collective ~= printed_collective then
    printed_collective = row.collective
    print()
    print(("%-14s %10s  %-11s %10s %11s  %10s %11s  %7s"):format(row.collective, "size", "variant", "time us",
      "busbw GB/s", "ref us", "ref GB/s", "x ref"))
  end
  print(("%-14s %10s  %-11s %10.2f %11.2f  %10s %11s  %7s"):format("", human(row.bytes), row.variant, row.us,
    row.busbw, row.ref_us and ("%.2f"):format(row.ref_us) or "-", row.ref_busbw and ("%.2f"):format(row.ref_busbw) or "-",
    row.ratio and ("%.2f"):format(row.ratio) or "-"))
end

local function record(collective, bytes, variant, us, ref_us)
  local factor = BUS_FACTOR[collective](W)
  local busbw = bytes / (us * 1e-6) / 1e9 * factor
  local ref_busbw = ref_us and bytes / (ref_us * 1e-6) / 1e9 * factor
  local ratio = ref_us and ref_us / us
  rows[#rows + 1] = { collective = collective, bytes = bytes, variant = variant, us = us, busbw = busbw,
    ref_us = ref_us, ref_busbw = ref_busbw, ratio = ratio }
  print_row(rows[#rows])
  output:add { collective = collective, dtype = dtype, ranks = W, backend = ctx.backend, bytes = bytes,
    variant = variant, time_us = us, busbw_gbs = busbw, reference = reference.name, reference_time_us = ref_us,
    reference_busbw_gbs = ref_busbw, x_reference = ratio }
end

-- The one-way variants take what fits a slot of the staging (ctx.ccl's, docs/collectives.md "One way"):
-- each member's message, its chunk (reduce_scatter, all_to_all, all_gather's input), or for ll_two_shot
-- a member's share of the message.
local staging = require("iris.ccl").staging(ctx)
local function one_way_fits(collective, variant, count)
  if variant ~= "ll" and variant ~= "ll_two_shot" then return true end
  if not staging then return false end
  local run = (collective == "all_reduce" or collective == "broadcast") and count or count / W
  local words = math.ceil(run * element / 8)
  if variant == "ll_two_shot" then words = math.ceil(words / W) end
  return words <= staging.words
end

-- What will be measured: per collective, its variants and the sizes (each as the bytes actually moved).
local plan = {}
local steps = 0
for _, collective in ipairs(wanted) do
  local variants = {}
  for _, v in ipairs(COLLECTIVES[collective]) do
    if not variants_wanted then
      variants[#variants + 1] = v
    else
      for _, w in ipairs(variants_wanted) do if w == v then variants[#variants + 1] = v end end
    end
  end
  local bytes = min_bytes
  while bytes <= max_bytes do
    local count = math.floor(bytes / element / W) * W -- divisible among the ranks
    if count > 0 then
      local measured = {}
      for _, variant in ipairs(variants) do
        if count * element <= (SLOW_VARIANT_MAX[variant] or math.huge) and one_way_fits(collective, variant, count) then
          measured[#measured + 1] = variant
        end
      end
      plan[#plan + 1] = { collective = collective, count = count, variants = measured }
      steps = steps + #measured + (reference.handle and 1 or 0)
    end
    bytes = bytes * 2
  end
end

-- How long the sweep will take, said before it starts when that is long: one call of all_reduce timed at
-- the smallest and the largest size (times in between grow with the bytes), and each measurement costs
-- about 7 calls plus `repeats` batches of at least BATCH_SECONDS (time_per_call).
local function estimate_seconds()
  local function one_call(bytes)
    local count = math.max(W, math.floor(bytes / element / W) * W)
    local t = ctx:ones(count, dtype)
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
    total = total + measurements * (7 * call + repeats * math.max(BATCH_SECONDS, call))
  end
  return total
end

local LONG_SWEEP = 20 -- seconds: a sweep expected to take longer says so first
if steps > 0 then
  local seconds = estimate_seconds()
  if me == 0 and seconds > LONG_SWEEP then
    print(("ccl_bench: %d measurements up to %s will take about %d s on the %s backend; rows appear as they are "
      .. "measured%s"):format(steps, human(max_bytes), math.ceil(seconds), ctx.backend,
      ctx.backend == "cpu" and " (--max 1MiB, the default on cpu, takes seconds)" or ""))
    io.stdout:flush()
  end
end

if me == 0 then
  print(("ctx.ccl on %d rank%s, backend %s (%s), %s; reference: %s%s"):format(W, W == 1 and "" or "s", ctx.backend,
    ctx.device_name, dtype, reference.name, reference.why and (" (" .. reference.why .. ")") or ""))
end

local progress = iris.progress(steps)
for _, step in ipairs(plan) do
  local collective, count = step.collective, step.count
  local actual = count * element
  local inp, out, ref_count = buffers(collective, count)
  if reference.handle then progress:step("%s %s, %s", collective, human(actual), reference.name) end
  local ref_us = reference_time(collective, inp, out, ref_count, 0)
  ref_us = ref_us and ref_us * 1e3
  for _, variant in ipairs(step.variants) do
    progress:step("%s %s, %s", collective, human(actual), variant)
    local fn = run(collective, variant, inp, out)
    local us = time_per_call(fn) * 1e3
    check(collective, variant, out)
    progress:finish() -- (clears a terminal's progress line before the row)
    record(collective, actual, variant, us, ref_us)
  end
  inp:free()
  if out ~= inp then out:free() end
end
progress:finish()

library.close(reference)
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
        table.insert(by_variant[row.variant], { row.bytes, row.busbw })
        if row.ref_busbw and not seen[row.bytes] then
          seen[row.bytes] = true
          reference_line[#reference_line + 1] = { row.bytes, row.ref_busbw }
        end
      end
    end
    if #reference_line > 0 then series[#series + 1] = { name = reference.name, points = reference_line } end
    if #series > 0 then
      local file = plot_file(collective)
      iris.plot.save(file, iris.plot.lines {
        title = ("ctx.ccl.%s%s, %d ranks, %s (%s backend)"):format(collective,
          reference.name ~= "none" and (" against " .. reference.name) or "", W, dtype, ctx.backend),
        x_label = "bytes (the whole buffer, as nccl-tests counts them)", y_label = "bus bandwidth GB/s",
        x_scale = "log2", x_text = iris.plot.bytes_text, series = series,
      })
      print(("plot: %s, %d lines drawn into %s"):format(collective, #series, file))
    end
  end
end

output:finish()
