-- 05_atomic_xchg: one rank at a time swaps values into another rank's slots with remote atomics (ctx.atomic_xchg), throughput and latency for every pair, every old value checked.
-- usage: mpirun -np 2 iris-lua scripts/05_atomic_xchg.lua [--size 256MiB] [--dtype int32] [--rounds 1000]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/05_atomic_xchg: rank `swapper` swaps a value into each of rank `owner`'s slots and keeps
-- the old ones; row = swapper, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "05_atomic_xchg",
  about = "one rank at a time swaps values into another rank's slots; throughput and latency for every pair",
  dtypes = patterns.XCHG_DTYPES,
  help = { size = "bytes of slots: 1048576, 256MiB, 1GiB",
    rounds = "swaps in a row for the latency, each waiting for the one before" },
  defaults = patterns.ATOMIC_DEFAULTS,
})
if not opts then return end -- --help

local ctx = iris.init { heap_size = patterns.heap_size(2 * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Run `run` swaps value(run) into each of `peer`'s slots and keeps the old values in this rank's
// `previous`: relaxed, at system scope (the memory of another GPU). Iris's atomic_xchg example.
__device__ T value(unsigned long long run) { return static_cast<T>(static_cast<float>(run % 100 + 1)); }
__global__ void swap_each(T* slots, T* previous, size_t n, unsigned long long run, iris::Context ctx, int peer) {
  for (size_t i = first_index(); i < n; i += grid_stride()) previous[i] = ctx.atomic_xchg(slots + i, value(run), peer, iris::relaxed, iris::sys);
}
// One thread swaps value(step) into one of `peer`'s slots for `rounds` steps in a row. acq_rel: each
// swap waits for the one before it, so the time per swap is the round trip of one remote atomic.
// Each swap must give back what the step before put there (0 before the first); `wrong` counts
// the ones that do not.
__global__ void swap_in_a_row(T* slot, int rounds, unsigned long long first_step, iris::Context ctx, int peer,
                              unsigned long long* wrong) {
  for (unsigned long long step = first_step; step < first_step + rounds; ++step) {
    const T old = ctx.atomic_xchg(slot, value(step), peer, iris::acq_rel, iris::sys);
    const float expected = step == 0 ? 0.0f : static_cast<float>(value(step - 1));
    if (static_cast<float>(old) != expected) atomicAdd(wrong, 1ull);
  }
}
]]))
-- value(run) of the kernels, for the checks.
local function value(run) return run % 100 + 1 end

local n, world = opts.elements, ctx.world_size
local slots = ctx:zeros(n, opts.dtype)     -- on the owner: what the swapper put there last
local previous = ctx:zeros(n, opts.dtype)  -- on the swapper: what it found there
local slot = ctx:zeros(1, opts.dtype)      -- on the owner: the slot of the swaps in a row
local wrong = ctx:zeros(1, "uint64")       -- on the swapper: swaps in a row that gave back a wrong value
local check = patterns.checker(ctx, mod)
local cfg = { grid = opts.grid, block = opts.block }
local runs = opts.warmup + opts.iters

patterns.print_header(ctx, opts, "rank ROW swaps values into each of rank COLUMN's slots with atomic_xchg",
  ("%s of %s slots, %d blocks x %d threads; latency: %d swaps in a row by one thread"):format(
    patterns.human_bytes(opts.bytes), opts.dtype, opts.grid, opts.block, opts.rounds))
local mine = {} -- this rank's row: its swaps, by the rank of the slots
local progress = iris.progress(world * world)
for swapper, owner in patterns.pairs(world) do
  progress:step("%d swaps into %d", swapper, owner)
  local me = ctx.rank == swapper
  if ctx.rank == owner then
    slots:fill(0)
    slot:fill(0)
  end
  if me then wrong:fill(0) end
  local run = -1
  local ms = patterns.time(ctx, opts, function()
    if me then
      run = run + 1
      mod.swap_each:launch(cfg, slots, previous, n, run, ctx, owner)
    end
  end)
  local step = 0
  local row_ms = patterns.time(ctx, opts, function()
    if me then
      mod.swap_in_a_row:launch({ grid = 1, block = 1 }, slot, opts.rounds, step, ctx, owner, wrong)
      step = step + opts.rounds
    end
  end)
  if opts.validate then
    local what = ("rank %d's swaps into rank %d"):format(swapper, owner)
    -- The slots hold the last run's value; the swapper got the run before's (0 for the first run).
    if ctx.rank == owner then
      check(slots, { value = value(runs - 1) }, what)
      check(slot, { value = value(runs * opts.rounds - 1) }, what .. " (in a row)")
    end
    if me then
      check(previous, { value = runs > 1 and value(runs - 2) or 0 }, what .. ", the values they gave back")
      iris.assert_equal(wrong:get(1), 0, what .. " (in a row): swaps that gave back a wrong value")
    end
  end
  if me then mine[owner] = { gbs = patterns.gbs(opts.bytes, ms), us = row_ms * 1e3 / opts.rounds } end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_atomics(ctx, all, {
  throughput = ("atomic_xchg throughput, GB/s of %s slots (row: swapping rank, column: rank of the slots)"):format(
    opts.dtype),
  latency = "atomic_xchg latency, us per swap (one thread, acq_rel swaps in a row)",
})
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every slot and every value given back, %d pairs"):format(world * world))
