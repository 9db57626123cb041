-- A producer/consumer flag protocol around a ring of ranks, several rounds, with host and device
-- barriers between rounds (issue 4): data put with a block copy, published with a release signal,
-- consumed after an acquiring wait_until.
local ctx = iris.init {}
local rank, world = ctx.rank, ctx.world_size
local N, ROUNDS = 1000, 4

local mod = iris.compile [[
// Rank r sends its data for round `round` to rank (r + 1) % world: copy, then (after every thread of
// the block finished its part) one release signal.
__global__ void produce(const float* data, float* inbox, uint64_t* flag, long n, iris::Context ctx, uint64_t round) {
  const int next = (ctx.rank + 1) % ctx.world_size;
  ctx.put_block(data, inbox, n, next);
  __syncthreads();
  if (threadIdx.x == 0) ctx.signal_set(flag, round, next);
}
// The consumer waits (bounded) for the round's flag, then reads the inbox.
__global__ void consume(const float* inbox, float* received, const uint64_t* flag, long n, uint64_t round) {
  if (threadIdx.x == 0) iris::wait_until(flag, iris::Cmp::ge, round);
  __syncthreads();
  for (long i = threadIdx.x; i < n; i += blockDim.x) received[i] = inbox[i];
}
__global__ void fill(float* data, long n, int rank, int round) {
  for (long i = threadIdx.x; i < n; i += blockDim.x) data[i] = static_cast<float>(rank * 100000 + round * 1000 + i % 1000);
}
// Counts device barriers: each rank adds 1 to every rank's count, then everyone must see world. The
// ranks of this rank's node add to one word, those of other nodes to another (`counters + 1`): across
// nodes on GPUs, other nodes' atomics are atomic with each other but not with a GPU's own on one word
// (docs/multinode.md), so a word takes atomics from one side only.
__global__ void arrive(int32_t* counters, const int32_t* node_of, iris::Context ctx) {
  for (int peer = 0; peer < ctx.world_size; ++peer) {
    ctx.atomic_add(counters + (node_of[peer] == node_of[ctx.rank] ? 0 : 1), 1, peer);
  }
}
__global__ void check_arrivals(const int32_t* counters, int32_t* seen) { *seen = counters[0] + counters[1]; }
]]

local data, inbox, received = ctx:zeros(N), ctx:zeros(N), ctx:zeros(N)
local flag = ctx:zeros(1, "uint64")
local counter, seen = ctx:zeros(2, "int32"), ctx:zeros(1, "int32")
local node_of = ctx:zeros(world, "int32")
local nodes = {}
for r = 0, world - 1 do nodes[r + 1] = require("ffi").C.iris_node_of(r) end
node_of:copy(nodes)
local previous = (rank - 1) % world
for round = 1, ROUNDS do
  mod.fill:launch({ grid = 1, block = 128 }, data, N, rank, round)
  ctx:barrier() -- the inboxes are free: last round's consumers are done
  mod.produce:launch({ grid = 1, block = 128 }, data, inbox, flag, N, ctx, round)
  mod.consume:launch({ grid = 1, block = 128 }, inbox, received, flag, N, round)
  local got = received:to_table()
  for i = 0, N - 1 do
    local expected = previous * 100000 + round * 1000 + i % 1000
    if got[i + 1] ~= expected then
      error(("round %d, rank %d, element %d: expected %d from rank %d, got %s"):format(round, rank, i, expected,
        previous, tostring(got[i + 1])))
    end
  end
  -- Device barrier between rounds: every rank's arrivals are visible after it.
  mod.arrive:launch({ grid = 1, block = 1 }, counter, node_of, ctx)
  ctx:device_barrier()
  mod.check_arrivals:launch({ grid = 1, block = 1 }, counter, seen)
  local arrivals = seen:to_table()[1]
  assert(arrivals == round * world, ("round %d, rank %d: %s arrivals after the device barrier, expected %d"):format(
    round, rank, tostring(arrivals), round * world))
end
print(("rank %d: %d rounds of producer/consumer flags and device barriers correct"):format(rank, ROUNDS))
