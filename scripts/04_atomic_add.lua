-- 04_atomic_add: one rank at a time adds to another rank's counters with remote atomics (ctx.atomic_add), throughput and latency for every pair, every increment counted.
-- usage: mpirun -np 2 iris-lua scripts/04_atomic_add.lua [--size 256MiB] [--dtype int32] [--rounds 1000]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/04_atomic_add: rank `adder` adds 1 to each of rank `owner`'s counters; row = adder, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "04_atomic_add",
  about = "one rank at a time adds 1 to each of another rank's counters; throughput and latency for every pair",
  dtypes = patterns.ADD_DTYPES,
  help = { size = "bytes of counters: 1048576, 256MiB, 1GiB",
    rounds = "atomic adds in a row for the latency, each waiting for the one before" },
  defaults = patterns.ATOMIC_DEFAULTS,
})
if not opts then return end -- --help
-- Each run adds 1 to every counter; the count must stay exact in the dtype.
local passes = opts.warmup + opts.iters
local exact_up_to = ({ float16 = 2048, bfloat16 = 256 })[opts.dtype]
if exact_up_to and passes > exact_up_to then
  patterns.usage_error("--warmup + --iters is %d, but %s counts exactly only up to %d", passes, opts.dtype, exact_up_to)
end

local ctx = iris.init { heap_size = patterns.heap_size(opts.bytes + opts.rounds * opts.element_size) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Adds 1 to each of `peer`'s counters: relaxed (a count publishes nothing), at system scope (the
// memory of another GPU). Iris's atomic_add example.
__global__ void add_to_each(T* counters, size_t n, iris::Context ctx, int peer) {
  const T one = static_cast<T>(1.0f);
  for (size_t i = first_index(); i < n; i += grid_stride()) ctx.atomic_add(counters + i, one, peer, iris::relaxed, iris::sys);
}
// One thread adds 1 to `rounds` of `peer`'s counters in a row. acq_rel: each add waits for the one
// before it to complete, so the time per add is the round trip of one remote atomic.
__global__ void add_in_a_row(T* counters, int rounds, iris::Context ctx, int peer) {
  const T one = static_cast<T>(1.0f);
  for (int k = 0; k < rounds; ++k) ctx.atomic_add(counters + k, one, peer, iris::acq_rel, iris::sys);
}
]]))

local n, world = opts.elements, ctx.world_size
local counters = ctx:zeros(n, opts.dtype)
local in_a_row = ctx:zeros(opts.rounds, opts.dtype)
local check = patterns.checker(ctx, mod)
local cfg = { grid = opts.grid, block = opts.block }

patterns.print_header(ctx, opts, "rank ROW adds 1 to each of rank COLUMN's counters with atomic_add",
  ("%s of %s counters, %d blocks x %d threads; latency: %d adds in a row by one thread"):format(
    patterns.human_bytes(opts.bytes), opts.dtype, opts.grid, opts.block, opts.rounds))
local mine = {} -- this rank's row: its adds, by the rank added to
local progress = iris.progress(world * world)
for adder, owner in patterns.pairs(world) do
  progress:step("%d adds to %d", adder, owner)
  local me = ctx.rank == adder
  if ctx.rank == owner then
    counters:fill(0)
    in_a_row:fill(0)
  end
  local ms = patterns.time(ctx, opts, function()
    if me then mod.add_to_each:launch(cfg, counters, n, ctx, owner) end
  end)
  local row_ms = patterns.time(ctx, opts, function()
    if me then mod.add_in_a_row:launch({ grid = 1, block = 1 }, in_a_row, opts.rounds, ctx, owner) end
  end)
  -- Every run added 1 to each counter, none lost, none twice.
  if ctx.rank == owner and opts.validate then
    local what = ("rank %d's adds to rank %d"):format(adder, owner)
    check(counters, { value = passes }, what)
    check(in_a_row, { value = passes }, what .. " (in a row)")
  end
  if me then mine[owner] = { gbs = patterns.gbs(opts.bytes, ms), us = row_ms * 1e3 / opts.rounds } end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_atomics(ctx, all, {
  throughput = ("atomic_add throughput, GB/s of %s counters (row: adding rank, column: rank of the counters)"):format(
    opts.dtype),
  latency = "atomic_add latency, us per add (one thread, acq_rel adds in a row)",
})
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every counter of %d pairs counted exactly %d adds"):format(world * world, passes))
