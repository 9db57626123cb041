-- 06_message_passing: producer and consumer over flags (put_block, signal_set with release, bounded wait_until with acquire), ping-pong latency for every pair, every message checked.
-- usage: mpirun -np 2 iris-lua scripts/06_message_passing.lua [--size 4KiB] [--dtype float32] [--rounds 1000]
--        [--iters 10] [--warmup 2] [--block 256] [--no-validate]    (--help: every option)
-- Iris's examples/06_message_passing, both ways: rank `initiator` sends a message to rank `responder` and
-- waits for its answer, `rounds` times in one kernel; row = initiator, column = responder.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "06_message_passing",
  about = "two ranks pass messages back and forth over flags; one-way latency for every pair",
  dtypes = patterns.DATA_DTYPES,
  help = { size = "bytes per message: 8, 4KiB, 1MiB", rounds = "round trips per run (one kernel on each side)",
    block = "threads of the one block that sends and receives" },
  defaults = { cpu = { size = "4KiB", dtype = "float32", rounds = 50, iters = 3, warmup = 1, block = 64 },
    gpu = { size = "4KiB", dtype = "float32", rounds = 1000, iters = 10, warmup = 2, block = 256 } },
})
if not opts then return end -- --help
patterns.require_ranks(2)

local ctx = iris.init { heap_size = patterns.heap_size(2 * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Sends round `round`'s message to `peer`: the block writes it into outbox, copies it into peer's
// inbox, and raises peer's flag to `round` once every part is there.
__device__ void send(T* outbox, T* inbox, size_t n, uint64_t* flag, uint64_t round, iris::Context ctx, int peer) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) outbox[i] = pattern(ctx.rank, round, i);
  __syncthreads();                                          // the whole message is in outbox
  ctx.put_block(outbox, inbox, n, peer);                    // each thread copies its part to peer
  __syncthreads();                                          // every part is written before ...
  if (threadIdx.x == 0) ctx.signal_set(flag, round, peer);  // ... the flag goes up (release, sys)
}
// Waits until this rank's flag says round `round`'s message from `peer` is in inbox, then counts the
// elements that differ from what `peer` sent into `wrong`.
__device__ void receive(const T* inbox, size_t n, const uint64_t* flag, uint64_t round, int peer,
                        unsigned long long* wrong) {
  if (threadIdx.x == 0) iris::wait_until(flag, iris::Cmp::ge, round);  // acquire, sys; gives up after IRIS_WAIT_TIMEOUT
  __syncthreads();                                                    // the whole block may read now
  unsigned long long differ = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (static_cast<float>(inbox[i]) != static_cast<float>(pattern(peer, round, i))) ++differ;
  }
  if (differ != 0) atomicAdd(wrong, differ);
  __syncthreads();  // everyone has read inbox before the answer lets peer write it again
}
// The initiator sends first and waits for the answer; the responder answers each message.
__global__ void ping(T* outbox, T* inbox, size_t n, uint64_t* flag, uint64_t first_round, int rounds,
                     iris::Context ctx, int peer, unsigned long long* wrong) {
  for (uint64_t round = first_round; round < first_round + rounds; ++round) {
    send(outbox, inbox, n, flag, round, ctx, peer);
    receive(inbox, n, flag, round, peer, wrong);
  }
}
__global__ void pong(T* outbox, T* inbox, size_t n, uint64_t* flag, uint64_t first_round, int rounds,
                     iris::Context ctx, int peer, unsigned long long* wrong) {
  for (uint64_t round = first_round; round < first_round + rounds; ++round) {
    receive(inbox, n, flag, round, peer, wrong);
    send(outbox, inbox, n, flag, round, ctx, peer);
  }
}
]]))

local n, world = opts.elements, ctx.world_size
local outbox = ctx:zeros(n, opts.dtype)
local inbox = ctx:zeros(n, opts.dtype)
local flag = ctx:zeros(1, "uint64")  -- the round of the last message that arrived here
local wrong = ctx:zeros(1, "uint64") -- elements of messages here that were not what was sent
local check = patterns.checker(ctx, mod)
local cfg = { grid = 1, block = opts.block }

patterns.print_header(ctx, opts, "rank ROW sends a message to rank COLUMN and waits for the answer, over and over",
  ("%s %s per message, one block of %d threads per side, %d round trips per run"):format(
    patterns.human_bytes(opts.bytes), opts.dtype, opts.block, opts.rounds))
local next_round = 1 -- rounds only grow, so a flag never has to be reset (every rank counts alike)
local mine = {}      -- this rank's row: its exchanges, by the responder
local progress = iris.progress(world * (world - 1))
for initiator, responder in patterns.pairs(world, true) do
  progress:step("%d <-> %d", initiator, responder)
  local role = ctx.rank == initiator and mod.ping or ctx.rank == responder and mod.pong
  local peer = ctx.rank == initiator and responder or initiator
  wrong:fill(0)
  local ms = patterns.time(ctx, opts, function()
    if role then role:launch(cfg, outbox, inbox, n, flag, next_round, opts.rounds, ctx, peer, wrong) end
    next_round = next_round + opts.rounds
  end)
  local last = next_round - 1
  if role and opts.validate then
    local what = ("messages from rank %d to rank %d"):format(peer, ctx.rank)
    iris.assert_equal(wrong:get(1), 0, what .. ": elements that differed from what was sent")
    iris.assert_equal(flag:get(1), last, what .. ": the flag after the last round")
    check(inbox, { rank = peer, round = last }, what .. ", the last one")
  end
  if ctx.rank == initiator then mine[responder] = { us = ms * 1e3 / opts.rounds / 2 } end
end
progress:finish()

local rows = patterns.gather_rows(ctx, mine)
if ctx.rank == 0 then
  patterns.print_matrix("message latency, us one way: half a round trip (row: sending first, column: answering)", world,
    function(r, c) return rows[r][c] and ("%.2f"):format(rows[r][c].us) end)
end
patterns.write_files(ctx, opts, rows)
patterns.print_validated(ctx, opts, ("every element of every message, %d pairs x %d round trips"):format(
  world * (world - 1), (opts.warmup + opts.iters) * opts.rounds))
