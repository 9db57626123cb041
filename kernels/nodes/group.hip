// The barrier of a ctx.ccl call over a group whose members span nodes without being every rank
// (src/lua/iris/ccl_nodes.lua, docs/multinode.md): nothing collective over every rank may run there
// (no ctx:barrier, no allocation), so the members meet through flags of their own, in a tensor every
// rank allocated at iris.init: `arrived` (a word per rank), `released` (a word per rank) and `count` (a
// word per rank: the barriers this rank made with that one). The group's first member waits until
// every other member has arrived, then releases them. Barriers between two ranks come in the same order
// on both (members call a group's collectives in one order), so each pair's count names the barrier.
// Flags of other nodes' ranks go through the host proxy; every wait is bounded (IRIS_WAIT_TIMEOUT).

// flags: arrived[world_size], released[world_size], count[world_size]. members: the k members, the
// group's first member first. Blocks of at least k threads.
__global__ void nodes_group_barrier(unsigned long long* flags, const int* members, int k, iris::Context ctx) {
  unsigned long long* arrived = flags;
  unsigned long long* released = flags + ctx.world_size;
  unsigned long long* count = flags + 2 * ctx.world_size;
  const int first = members[0];
  const int i = static_cast<int>(threadIdx.x);
  if (ctx.rank != first) {
    if (i != 0) return;
    const unsigned long long s = ++count[first];
    ctx.signal_set(arrived + ctx.rank, s, first);
    ctx.wait_until(released + first, iris::Cmp::ge, s);
    return;
  }
  unsigned long long s = 0;
  if (i >= 1 && i < k) {
    const int m = members[i];
    s = ++count[m];
    ctx.wait_until(arrived + m, iris::Cmp::ge, s);
  }
  __syncthreads();
  if (i >= 1 && i < k) ctx.signal_set(released + first, s, members[i]);
}
