// ctx:device_barrier(): every rank's device waits until every rank's device has arrived.
//
// Slot r of a rank's runtime scratch region (src/heap/layout.hpp: kRuntimeScratchOffset, zeroed at
// init) holds the last barrier epoch rank r arrived at. Arriving at epoch e, a rank writes e into its
// slot in every rank's heap (release, system scope: everything its device did before is visible to
// whoever sees e), then waits until every slot of its own heap holds at least e (acquire, system
// scope). Epochs only grow, so a fast rank's next barrier cannot be mistaken for this one. The waits
// are bounded: a rank that never arrives becomes a device fault naming "device_barrier".
// Launched with one block of min(world_size, 1024) threads.
__global__ void iris_device_barrier(iris::Context ctx, uint64_t* slots, uint64_t epoch) {
  // Work this rank's device finished before (earlier kernels) is ordered before the signals below.
  iris::fence(iris::acq_rel, iris::sys);
  for (int peer = threadIdx.x; peer < ctx.world_size; peer += blockDim.x) {
    ctx.signal_set(slots + ctx.rank, epoch, peer);
  }
  for (int peer = threadIdx.x; peer < ctx.world_size; peer += blockDim.x) {
    iris::detail::wait_for(slots + peer, iris::Cmp::ge, epoch, iris::acquire, iris::sys, "device_barrier");
  }
  __syncthreads();  // the kernel, and so the stream, goes on only once every slot was seen
}
