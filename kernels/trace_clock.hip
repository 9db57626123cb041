// iris.trace: reads the device clock next to the host's, to put device timestamps on the host clock
// (src/programs/device_timeline.cpp; docs/tracing.md).
//
// `slots` is host memory the device maps (MappedHostBuffer). Round i (1-based): the host writes i into
// slots[0] and notes its clock; the kernel, seeing it, reads the device clock into slots[1 + i] and
// writes i into slots[1]; the host notes its clock again when it sees that. The device reading lies
// between the host's two readings, so the round with the shortest wait pins the offset best. The waits
// are bounded (a host that never answers becomes a device fault naming "trace clock").
// Launched with one block of one thread.
__global__ void iris_trace_clock(uint64_t* slots, int rounds) {
  for (int i = 1; i <= rounds; ++i) {
    const uint64_t round = static_cast<uint64_t>(i);
    // A hot spin first: a wait that backs off (on the cpu backend it sleeps) would count as latency.
    const unsigned long long until = iris::detail::clock_ns() + 10000000ull;
    while (iris::detail::atomic_load(slots, iris::acquire, iris::sys) < round && iris::detail::clock_ns() < until) {
    }
    iris::detail::wait_for(slots, iris::Cmp::ge, round, iris::acquire, iris::sys, "trace clock");
    slots[1 + i] = iris::detail::clock_ns();
    iris::detail::atomic_store(slots + 1, round, iris::release, iris::sys);
  }
}
