// ctx:device_barrier(): every rank's device waits until every rank's device has arrived.
//
// Slot r of a rank's runtime scratch region (src/heap/layout.hpp: kRuntimeScratchOffset, zeroed at
// init) holds the last barrier epoch rank r arrived at. Arriving at epoch e, a rank writes e into its
// slot in every rank's heap (release, system scope: everything its device did before is visible to
// whoever sees e), then waits until every slot of its own heap holds at least e (acquire, system
// scope). Epochs only grow, so a fast rank's next barrier cannot be mistaken for this one. The waits
// are bounded: a rank that never arrives becomes a device fault naming "device_barrier".
//
// The epoch is counted on the device: a rank's own slot in its own heap is written by this kernel
// alone, so it holds this rank's previous epoch, and e is one more. Nothing comes from the host, so a
// barrier captured in a graph (ctx:capture) is right at every replay, mixed with eager ones.
// Launched with one block of min(world_size, 1024) threads.
__global__ void iris_device_barrier(iris::Context ctx, uint64_t* slots) {
  __shared__ uint64_t epoch;
  // The previous barrier's kernel ran before this one on this device's stream: its write is visible.
  if (threadIdx.x == 0) epoch = ctx.load(slots + ctx.rank, ctx.rank) + 1;
  __syncthreads();  // read before any thread overwrites the slot below
  const uint64_t e = epoch;
  // Work this rank's device finished before (earlier kernels) is ordered before the signals below.
  iris::fence(iris::acq_rel, iris::sys);
  for (int peer = threadIdx.x; peer < ctx.world_size; peer += blockDim.x) {
    ctx.signal_set(slots + ctx.rank, e, peer);
  }
  for (int peer = threadIdx.x; peer < ctx.world_size; peer += blockDim.x) {
    iris::detail::wait_for(slots + peer, iris::Cmp::ge, e, iris::acquire, iris::sys, "device_barrier");
  }
  __syncthreads();  // the kernel, and so the stream, goes on only once every slot was seen
}
