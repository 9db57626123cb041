// Memory-order primitives for the cpu backend: the compiler's __atomic builtins. Ranks are processes
// sharing memory and a CPU's caches are coherent, so every scope is the same; the semantic is honoured
// as written (x86 makes most of them free, AArch64 does not).
#ifndef IRIS_IMPL_ORDER_CPU_HPP
#define IRIS_IMPL_ORDER_CPU_HPP

namespace iris {
namespace detail {

IRIS_DEVICE constexpr int order_of(Semantic sem) {
  return sem == relaxed ? __ATOMIC_RELAXED
         : sem == acquire ? __ATOMIC_ACQUIRE
         : sem == release ? __ATOMIC_RELEASE
                          : __ATOMIC_ACQ_REL;
}

#define IRIS_CPU_RMW(name, builtin)                                                                   \
  template <class T>                                                                                  \
  IRIS_DEVICE T name(T* p, T v, Semantic sem, Scope) {                                                \
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
  return __atomic_fetch_add(p, v, order_of(sem));
}

template <class U>
IRIS_DEVICE U cas(U* p, U cmp, U v, Semantic sem, Scope) {
  const int failure = order_of(load_semantic(sem));  // a failed exchange only loads
  __atomic_compare_exchange_n(p, &cmp, v, false, order_of(sem), failure);
  return cmp;  // the value found: equal to the expected one on success
}

template <class T>
IRIS_DEVICE T atomic_load(const T* p, Semantic sem, Scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  return bit_cast<T>(__atomic_load_n(reinterpret_cast<const U*>(p), order_of(load_semantic(sem))));
}

template <class T>
IRIS_DEVICE void atomic_store(T* p, T value, Semantic sem, Scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  __atomic_store_n(reinterpret_cast<U*>(p), bit_cast<U>(value), order_of(store_semantic(sem)));
}

IRIS_DEVICE void fence_impl(Semantic sem, Scope) {
  if (sem != relaxed) __atomic_thread_fence(order_of(sem));
}

// A spinning device thread hands the OS thread to the other threads of its block.
IRIS_DEVICE void pause() { ::iris::cpu::yield(); }

IRIS_DEVICE unsigned long long clock_ns() { return ::iris::cpu::clock_ns(); }

[[noreturn]] IRIS_DEVICE void trap(const char* reason) { ::iris::cpu::trap(reason); }

}  // namespace detail
}  // namespace iris

#endif  // IRIS_IMPL_ORDER_CPU_HPP
