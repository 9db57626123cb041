// Device-side trace events (iris.hpp documents trace_begin/trace_end; docs/tracing.md the rest).
//
// The registry compiles a module with IRIS_TRACE_DEVICE defined only while a trace is on. Without it
// both calls are empty inline functions and vanish from the kernel: tracing off costs nothing.
#ifndef IRIS_IMPL_TRACE_HPP
#define IRIS_IMPL_TRACE_HPP

namespace iris {
namespace detail {

constexpr uint32_t kNoTrace = 0xffffffffu;

#if defined(IRIS_TRACE_DEVICE)
// The SM or CU this block runs on: which blocks shared a unit shows in the trace.
IRIS_DEVICE uint32_t execution_unit() {
#if defined(IRIS_PLATFORM_CUDA)
  unsigned int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
#elif defined(IRIS_PLATFORM_HIP)
  return static_cast<uint32_t>(__smid());
#else
  return 0;
#endif
}

IRIS_DEVICE abi::TraceRecord* trace_records(abi::TraceBuffer* buffer) {
  return reinterpret_cast<abi::TraceRecord*>(buffer + 1);
}
#endif

}  // namespace detail

#if defined(IRIS_TRACE_DEVICE)

IRIS_DEVICE TraceHandle trace_begin(uint32_t id, int target_rank, uint64_t bytes) {
  TraceHandle handle;
  abi::TraceBuffer* buffer = __iris_module_state.trace;
  if (buffer == nullptr || threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return handle;
  if (detail::atomic_load(&buffer->enabled, relaxed, gpu) == 0u) return handle;
  const uint64_t index = detail::add(&buffer->next, static_cast<uint64_t>(1), relaxed, gpu);
  if (index >= buffer->capacity) return handle;  // counted in `next`, not written
  abi::TraceRecord& record = detail::trace_records(buffer)[index];
  record.end_ns = 0;
  record.bytes = bytes;
  record.id = id;
  record.block = static_cast<uint32_t>(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  record.target_rank = target_rank;
  record.unit = detail::execution_unit();
  record.begin_ns = detail::clock_ns();  // last: the fields above are not part of what is timed
  handle.index = static_cast<uint32_t>(index);
  return handle;
}

IRIS_DEVICE void trace_end(TraceHandle handle) {
  if (handle.index == detail::kNoTrace) return;
  abi::TraceBuffer* buffer = __iris_module_state.trace;
  detail::trace_records(buffer)[handle.index].end_ns = detail::clock_ns();
}

#else

IRIS_DEVICE TraceHandle trace_begin(uint32_t, int, uint64_t) { return TraceHandle(); }
IRIS_DEVICE void trace_end(TraceHandle) {}

#endif

IRIS_DEVICE TraceHandle Context::trace_begin(uint32_t id, int target_rank, uint64_t bytes) const {
  return ::iris::trace_begin(id, target_rank, bytes);
}
IRIS_DEVICE void Context::trace_end(TraceHandle handle) const { ::iris::trace_end(handle); }

}  // namespace iris

#endif  // IRIS_IMPL_TRACE_HPP
