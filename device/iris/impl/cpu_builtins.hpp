// CUDA's atomic and fence builtins for kernels that use them directly, on the cpu backend (CUDA and
// HIP compilers have them built in). Same meaning as there: relaxed, device scope.
#ifndef IRIS_IMPL_CPU_BUILTINS_HPP
#define IRIS_IMPL_CPU_BUILTINS_HPP

template <class T>
inline T atomicAdd(T* p, T v) {
  return ::iris::detail::add(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicSub(T* p, T v) {
  return ::iris::detail::add(p, ::iris::detail::negate_int(v), ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicExch(T* p, T v) {
  return ::iris::detail::exchange_any(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicMin(T* p, T v) {
  return ::iris::detail::min_max<T, false>(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicMax(T* p, T v) {
  return ::iris::detail::min_max<T, true>(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicAnd(T* p, T v) {
  return ::iris::detail::fetch_and(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicOr(T* p, T v) {
  return ::iris::detail::fetch_or(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicXor(T* p, T v) {
  return ::iris::detail::fetch_xor(p, v, ::iris::relaxed, ::iris::gpu);
}
template <class T>
inline T atomicCAS(T* p, T compare, T v) {
  return ::iris::detail::cas_any(p, compare, v, ::iris::relaxed, ::iris::gpu);
}
// ((old >= limit) ? 0 : old + 1) and ((old == 0 || old > limit) ? limit : old - 1), as CUDA defines them.
inline unsigned int atomicInc(unsigned int* p, unsigned int limit) {
  return ::iris::detail::cas_loop(p, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; },
                                  ::iris::relaxed, ::iris::gpu);
}
inline unsigned int atomicDec(unsigned int* p, unsigned int limit) {
  return ::iris::detail::cas_loop(
      p, [limit](unsigned int old) { return (old == 0u || old > limit) ? limit : old - 1u; }, ::iris::relaxed,
      ::iris::gpu);
}

// Sequentially consistent, as CUDA's are (and a release for the weak memory model).
inline void __threadfence() {
  ::iris::detail::ordering_point(nullptr, 0, ::iris::release);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_block() { __threadfence(); }
inline void __threadfence_system() { __threadfence(); }

#endif  // IRIS_IMPL_CPU_BUILTINS_HPP
