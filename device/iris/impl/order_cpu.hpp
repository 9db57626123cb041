// Memory-order primitives for the cpu backend: the compiler's __atomic builtins. Ranks are processes
// sharing memory and a CPU's caches are coherent, so every scope is the same; the semantic is honoured
// as written (x86 makes most of them free, AArch64 does not).
//
// The weak memory model (IRIS_CPU_MEMORY_MODEL=weak builds kernels with IRIS_CPU_WEAK_MEMORY): a
// CPU's own order hides a missing release, so the device API's stores to other ranks' heaps wait in
// a per-thread store buffer in the executor (src/runtime/cpu/cpu_store_buffer.hpp) and become visible
// late and out of order. Every ordering point below tells the executor first: a release (store,
// read-modify-write or fence) makes all of the thread's stores visible; any other atomic makes those
// to its own address visible (a thread sees its own stores in order). Without the define these are
// empty and the code is what it was.
#ifndef IRIS_IMPL_ORDER_CPU_HPP
#define IRIS_IMPL_ORDER_CPU_HPP

namespace iris {
namespace detail {

// An atomic of `sem` on `bytes` at p is about to happen.
IRIS_DEVICE void ordering_point(const void* p, unsigned long bytes, Semantic sem) {
#if defined(IRIS_CPU_WEAK_MEMORY)
  if (sem == release || sem == acq_rel) {
    ::iris::cpu::runtime->weak_release();
  } else {
    ::iris::cpu::runtime->weak_commit(p, bytes);
  }
#else
  (void)p, (void)bytes, (void)sem;
#endif
}

// Copies bytes the way a plain store of the device API writes them (block copies).
IRIS_DEVICE void copy_bytes(void* dst, const void* src, unsigned long bytes, bool to_another_rank) {
#if defined(IRIS_CPU_WEAK_MEMORY)
  ::iris::cpu::runtime->weak_copy(dst, src, bytes, to_another_rank);
#else
  (void)to_another_rank;
  memcpy(dst, src, bytes);
#endif
}

#if defined(IRIS_CPU_WEAK_MEMORY)
// The device API's plain accesses (order.hpp has the plain versions): a load sees this thread's own
// buffered stores; a store to another rank's heap waits in the buffer, any other is made at once.
template <class T>
IRIS_DEVICE T plain_load(const T* p) {
  T v = *p;
  ::iris::cpu::runtime->weak_copy(&v, p, sizeof(T), 0);
  return v;
}
template <class T>
IRIS_DEVICE void plain_store(T* p, const T& v, bool to_another_rank) {
  ::iris::cpu::runtime->weak_copy(p, &v, sizeof(T), to_another_rank);
}
#endif

IRIS_DEVICE constexpr int order_of(Semantic sem) {
  return sem == relaxed ? __ATOMIC_RELAXED
         : sem == acquire ? __ATOMIC_ACQUIRE
         : sem == release ? __ATOMIC_RELEASE
                          : __ATOMIC_ACQ_REL;
}

#define IRIS_CPU_RMW(name, builtin)                                                                   \
  template <class T>                                                                                  \
  IRIS_DEVICE T name(T* p, T v, Semantic sem, Scope) {                                                \
    ordering_point(p, sizeof(T), sem);                                                                \
    return builtin(p, v, order_of(sem));                                                              \
  }
IRIS_CPU_RMW(fetch_and, __atomic_fetch_and)
IRIS_CPU_RMW(fetch_or, __atomic_fetch_or)
IRIS_CPU_RMW(fetch_xor, __atomic_fetch_xor)
IRIS_CPU_RMW(exchange, __atomic_exchange_n)
#undef IRIS_CPU_RMW

// Integer adds are native; float adds and min/max go through compare-exchange (atomics.hpp).
template <class T>
IRIS_DEVICE typename enable_if<atomic_int<T>::value, T>::type fetch_add(T* p, T v, Semantic sem, Scope) {
  ordering_point(p, sizeof(T), sem);
  return __atomic_fetch_add(p, v, order_of(sem));
}

template <class U>
IRIS_DEVICE U cas(U* p, U cmp, U v, Semantic sem, Scope) {
  const int failure = order_of(load_semantic(sem));  // a failed exchange only loads
  ordering_point(p, sizeof(U), sem);
  __atomic_compare_exchange_n(p, &cmp, v, false, order_of(sem), failure);
  return cmp;  // the value found: equal to the expected one on success
}

template <class T>
IRIS_DEVICE T atomic_load(const T* p, Semantic sem, Scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  ordering_point(p, sizeof(T), relaxed);  // its own buffered stores to p first
  return bit_cast<T>(__atomic_load_n(reinterpret_cast<const U*>(p), order_of(load_semantic(sem))));
}

template <class T>
IRIS_DEVICE void atomic_store(T* p, T value, Semantic sem, Scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  ordering_point(p, sizeof(T), store_semantic(sem));
  __atomic_store_n(reinterpret_cast<U*>(p), bit_cast<U>(value), order_of(store_semantic(sem)));
}

IRIS_DEVICE void fence_impl(Semantic sem, Scope) {
  if (sem == relaxed) return;
  ordering_point(nullptr, 0, release);  // every fence but a relaxed one orders this thread's stores
  __atomic_thread_fence(order_of(sem));
}

// A spinning device thread hands the OS thread to the other threads of its block.
IRIS_DEVICE void pause() { ::iris::cpu::yield(); }

IRIS_DEVICE unsigned long long clock_ns() { return ::iris::cpu::clock_ns(); }

[[noreturn]] IRIS_DEVICE void trap(const char* reason) { ::iris::cpu::trap(reason); }

}  // namespace detail
}  // namespace iris

#endif  // IRIS_IMPL_ORDER_CPU_HPP
