// Memory-order primitives for AMD GPUs: clang's __hip_atomic_* builtins, which take a C++ memory
// order and a HIP memory scope (workgroup, agent, system) for every access.
#ifndef IRIS_IMPL_ORDER_HIP_HPP
#define IRIS_IMPL_ORDER_HIP_HPP

// Expands EMIT(order, scope, ...) with constant arguments, as the builtins want them.
#define IRIS_HIP_SCOPES(ORDER, scope, EMIT, ...)                                  \
  switch (scope) {                                                                \
    case ::iris::block: EMIT(ORDER, __HIP_MEMORY_SCOPE_WORKGROUP, __VA_ARGS__); break; \
    case ::iris::gpu: EMIT(ORDER, __HIP_MEMORY_SCOPE_AGENT, __VA_ARGS__); break;        \
    default: EMIT(ORDER, __HIP_MEMORY_SCOPE_SYSTEM, __VA_ARGS__); break;                \
  }
#define IRIS_HIP_DISPATCH(sem, scope, EMIT, ...)                                          \
  switch (sem) {                                                                          \
    case ::iris::relaxed: IRIS_HIP_SCOPES(__ATOMIC_RELAXED, scope, EMIT, __VA_ARGS__) break; \
    case ::iris::acquire: IRIS_HIP_SCOPES(__ATOMIC_ACQUIRE, scope, EMIT, __VA_ARGS__) break; \
    case ::iris::release: IRIS_HIP_SCOPES(__ATOMIC_RELEASE, scope, EMIT, __VA_ARGS__) break; \
    default: IRIS_HIP_SCOPES(__ATOMIC_ACQ_REL, scope, EMIT, __VA_ARGS__) break;              \
  }

#define IRIS_HIP_RMW_EMIT(ORDER, SCOPE, BUILTIN) old = BUILTIN(p, v, ORDER, SCOPE)
#define IRIS_HIP_LOAD_EMIT(ORDER, SCOPE, unused) v = __hip_atomic_load(p, ORDER, SCOPE)
#define IRIS_HIP_STORE_EMIT(ORDER, SCOPE, unused) __hip_atomic_store(p, v, ORDER, SCOPE)
// The failure order of a compare-exchange may not release: it is the success order's acquire part.
#define IRIS_HIP_CAS_EMIT(ORDER, SCOPE, unused)                                                         \
  __hip_atomic_compare_exchange_strong(                                                                  \
      p, &cmp, v, ORDER, (ORDER == __ATOMIC_ACQUIRE || ORDER == __ATOMIC_ACQ_REL) ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED, \
      SCOPE)

#define IRIS_HIP_RMW(name, T, BUILTIN)                                     \
  IRIS_DEVICE T name(T* p, T v, Semantic sem, Scope scope) {               \
    T old;                                                                 \
    IRIS_HIP_DISPATCH(sem, scope, IRIS_HIP_RMW_EMIT, BUILTIN)              \
    return old;                                                            \
  }
#define IRIS_HIP_RMW_ALL_INTS(name, BUILTIN)      \
  IRIS_HIP_RMW(name, int, BUILTIN)                \
  IRIS_HIP_RMW(name, unsigned int, BUILTIN)       \
  IRIS_HIP_RMW(name, long long, BUILTIN)          \
  IRIS_HIP_RMW(name, unsigned long long, BUILTIN)

namespace iris {
namespace detail {

IRIS_HIP_RMW_ALL_INTS(fetch_add, __hip_atomic_fetch_add)
IRIS_HIP_RMW(fetch_add, float, __hip_atomic_fetch_add)
IRIS_HIP_RMW(fetch_add, double, __hip_atomic_fetch_add)
IRIS_HIP_RMW_ALL_INTS(fetch_min, __hip_atomic_fetch_min)
IRIS_HIP_RMW_ALL_INTS(fetch_max, __hip_atomic_fetch_max)
IRIS_HIP_RMW(fetch_and, unsigned int, __hip_atomic_fetch_and)
IRIS_HIP_RMW(fetch_and, unsigned long long, __hip_atomic_fetch_and)
IRIS_HIP_RMW(fetch_or, unsigned int, __hip_atomic_fetch_or)
IRIS_HIP_RMW(fetch_or, unsigned long long, __hip_atomic_fetch_or)
IRIS_HIP_RMW(fetch_xor, unsigned int, __hip_atomic_fetch_xor)
IRIS_HIP_RMW(fetch_xor, unsigned long long, __hip_atomic_fetch_xor)
IRIS_HIP_RMW(exchange, unsigned int, __hip_atomic_exchange)
IRIS_HIP_RMW(exchange, unsigned long long, __hip_atomic_exchange)

#define IRIS_NATIVE_INT_MINMAX 1
#define IRIS_NATIVE_FLOAT_ADD 1

IRIS_DEVICE unsigned int cas(unsigned int* p, unsigned int cmp, unsigned int v, Semantic sem, Scope scope) {
  IRIS_HIP_DISPATCH(sem, scope, IRIS_HIP_CAS_EMIT, 0)
  return cmp;  // the builtin leaves the value it found in `cmp`
}
IRIS_DEVICE unsigned long long cas(unsigned long long* p, unsigned long long cmp, unsigned long long v, Semantic sem,
                                   Scope scope) {
  IRIS_HIP_DISPATCH(sem, scope, IRIS_HIP_CAS_EMIT, 0)
  return cmp;
}

template <class T>
IRIS_DEVICE T atomic_load(const T* value_p, Semantic sem, Scope scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  const U* p = reinterpret_cast<const U*>(value_p);
  U v;
  if (load_semantic(sem) == acquire) {
    IRIS_HIP_SCOPES(__ATOMIC_ACQUIRE, scope, IRIS_HIP_LOAD_EMIT, 0)
  } else {
    IRIS_HIP_SCOPES(__ATOMIC_RELAXED, scope, IRIS_HIP_LOAD_EMIT, 0)
  }
  return bit_cast<T>(v);
}

template <class T>
IRIS_DEVICE void atomic_store(T* value_p, T value, Semantic sem, Scope scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  U* p = reinterpret_cast<U*>(value_p);
  U v = bit_cast<U>(value);
  if (store_semantic(sem) == release) {
    IRIS_HIP_SCOPES(__ATOMIC_RELEASE, scope, IRIS_HIP_STORE_EMIT, 0)
  } else {
    IRIS_HIP_SCOPES(__ATOMIC_RELAXED, scope, IRIS_HIP_STORE_EMIT, 0)
  }
}

IRIS_DEVICE void fence_impl(Semantic sem, Scope scope) {
  if (sem == relaxed) return;
  switch (scope) {
    case block: __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "workgroup"); break;
    case gpu: __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent"); break;
    default: __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, ""); break;
  }
}

IRIS_DEVICE void pause() { __builtin_amdgcn_s_sleep(2); }

// wall_clock64() counts at a constant 100 MHz on CDNA GPUs (gfx908, gfx90a, gfx94x).
IRIS_DEVICE unsigned long long clock_ns() { return static_cast<unsigned long long>(wall_clock64()) * 10ull; }

[[noreturn]] IRIS_DEVICE void trap(const char*) {
  __threadfence_system();
  __builtin_trap();
}

}  // namespace detail
}  // namespace iris

#undef IRIS_HIP_RMW
#undef IRIS_HIP_RMW_ALL_INTS

#endif  // IRIS_IMPL_ORDER_HIP_HPP
