// ctx:device_barrier(): every rank's device waits until every rank's device has arrived.
//
// Slot r of a rank's runtime scratch region (src/heap/layout.hpp: kRuntimeScratchOffset, zeroed at
// init) holds the last barrier epoch rank r arrived at. Arriving at epoch e, a rank writes e into its
// slot in every rank's heap (release, system scope: everything its device did before is visible to
// whoever sees e), then waits until every slot of its own heap holds at least e (acquire, system
// scope). Epochs only grow, so a fast rank's next barrier cannot be mistaken for this one. The waits
// are bounded: a rank that never arrives becomes a device fault naming it ("device_barrier on rank 0:
// rank 2 did not arrive within 10.0 s ...").
//
// The epoch is counted on the device: a rank's own slot in its own heap is written by this kernel
// alone, so it holds this rank's previous epoch, and e is one more. Nothing comes from the host, so a
// barrier captured in a graph (ctx:capture) is right at every replay, mixed with eager ones.
// Launched with one block of min(world_size, 1024) threads.
[[noreturn]] __device__ __noinline__ void iris_device_barrier_absent(int me, int peer, uint64_t seen, uint64_t epoch,
                                                                     unsigned long long waited_ns) {
  iris::detail::report_and_trap("device_barrier: a rank did not arrive", [&](iris::abi::DeviceMailbox& box) {
    box.waited_seconds = static_cast<double>(waited_ns) * 1e-9;  // a wait gave up: the host asks where everyone is
    iris::detail::Text{box.what, 0, static_cast<int>(sizeof box.what)}.put("device_barrier");
    iris::detail::Text text{box.message, 0, static_cast<int>(sizeof box.message)};
    text.put("device_barrier on rank ");
    text.put(me);
    text.put(": rank ");
    text.put(peer);
    text.put(" did not arrive within ");
    text.put(static_cast<uint64_t>(waited_ns / 1000000000ull));
    text.put(".");
    text.put(static_cast<uint64_t>(waited_ns / 100000000ull % 10));
    text.put(" s (it arrived at ");
    text.put(seen);
    text.put(seen == 1 ? " device barrier" : " device barriers");
    text.put(" before, this is number ");
    text.put(epoch);
    text.put(")");
  });
}

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
    uint64_t seen = 0;
    iris::detail::bounded_spin(
        [&] {
          seen = iris::detail::atomic_load(slots + peer, iris::acquire, iris::sys);
          return seen >= e;
        },
        [&](unsigned long long waited) { iris_device_barrier_absent(ctx.rank, peer, seen, e, waited); });
  }
  __syncthreads();  // the kernel, and so the stream, goes on only once every slot was seen
}
