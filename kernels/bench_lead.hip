// iris.bench's `lead` (src/lua/iris/kernel.lua): one thread keeps the device busy for `ns` nanoseconds
// on the stream, launched just before a timed call's first event, so that the host's issue of the call
// (its argument checks, LuaJIT compiling a trace, a library's own host work) runs while the device is
// still busy and the events time the device's work alone (docs/perf.md, "The GEMM alone's slow rows").
__global__ void iris_bench_lead(unsigned long long ns) {
  const unsigned long long until = iris::detail::clock_ns() + ns;
  while (iris::detail::clock_ns() < until) {
  }
}
