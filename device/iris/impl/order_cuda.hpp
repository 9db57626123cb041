// Memory-order primitives for NVIDIA GPUs: inline PTX with explicit .sem and .scope (PTX ISA 6.0+,
// sm_70+), so every access says what it orders and with whom. CUDA's own atomicAdd & co. are relaxed
// at gpu scope, which is not what a flag another GPU reads needs.
#ifndef IRIS_IMPL_ORDER_CUDA_HPP
#define IRIS_IMPL_ORDER_CUDA_HPP

// Expands EMIT(".sem", ".scope", ...) once per (sem, scope) pair, chosen by a switch that folds away
// when both are constants (they nearly always are, after inlining).
#define IRIS_PTX_SCOPES(SEM, scope, EMIT, ...)                \
  switch (scope) {                                            \
    case ::iris::block: EMIT(SEM, ".cta", __VA_ARGS__); break; \
    case ::iris::gpu: EMIT(SEM, ".gpu", __VA_ARGS__); break;   \
    default: EMIT(SEM, ".sys", __VA_ARGS__); break;            \
  }
#define IRIS_PTX_DISPATCH(sem, scope, EMIT, ...)                                  \
  switch (sem) {                                                                  \
    case ::iris::relaxed: IRIS_PTX_SCOPES(".relaxed", scope, EMIT, __VA_ARGS__) break; \
    case ::iris::acquire: IRIS_PTX_SCOPES(".acquire", scope, EMIT, __VA_ARGS__) break; \
    case ::iris::release: IRIS_PTX_SCOPES(".release", scope, EMIT, __VA_ARGS__) break; \
    default: IRIS_PTX_SCOPES(".acq_rel", scope, EMIT, __VA_ARGS__) break;             \
  }

// Loads may only acquire and stores only release: two-way dispatches for them.
#define IRIS_PTX_LOAD_DISPATCH(sem, scope, ...)                             \
  if (load_semantic(sem) == ::iris::acquire) {                              \
    IRIS_PTX_SCOPES(".acquire", scope, IRIS_PTX_LOAD, __VA_ARGS__)          \
  } else {                                                                  \
    IRIS_PTX_SCOPES(".relaxed", scope, IRIS_PTX_LOAD, __VA_ARGS__)          \
  }
#define IRIS_PTX_STORE_DISPATCH(sem, scope, ...)                            \
  if (store_semantic(sem) == ::iris::release) {                             \
    IRIS_PTX_SCOPES(".release", scope, IRIS_PTX_STORE, __VA_ARGS__)         \
  } else {                                                                  \
    IRIS_PTX_SCOPES(".relaxed", scope, IRIS_PTX_STORE, __VA_ARGS__)         \
  }

#define IRIS_PTX_ATOM(SEM, SCOPE, OP, C) \
  asm volatile("atom" SEM SCOPE OP " %0, [%1], %2;" : "=" C(old) : "l"(p), C(v) : "memory")
#define IRIS_PTX_CAS(SEM, SCOPE, OP, C) \
  asm volatile("atom" SEM SCOPE OP " %0, [%1], %2, %3;" : "=" C(old) : "l"(p), C(cmp), C(v) : "memory")
#define IRIS_PTX_LOAD(SEM, SCOPE, OP, C) asm volatile("ld" SEM SCOPE OP " %0, [%1];" : "=" C(v) : "l"(p) : "memory")
#define IRIS_PTX_STORE(SEM, SCOPE, OP, C) asm volatile("st" SEM SCOPE OP " [%0], %1;" ::"l"(p), C(v) : "memory")
#define IRIS_PTX_FENCE(SEM, SCOPE, unused) asm volatile("fence" SEM SCOPE ";" ::: "memory")

#define IRIS_PTX_RMW(name, T, OP, C)                                        \
  IRIS_DEVICE T name(T* p, T v, Semantic sem, Scope scope) {                \
    T old;                                                                  \
    IRIS_PTX_DISPATCH(sem, scope, IRIS_PTX_ATOM, OP, C)                     \
    return old;                                                             \
  }

namespace iris {
namespace detail {

IRIS_PTX_RMW(fetch_add, int, ".add.s32", "r")
IRIS_PTX_RMW(fetch_add, unsigned int, ".add.u32", "r")
IRIS_PTX_RMW(fetch_add, long long, ".add.u64", "l")
IRIS_PTX_RMW(fetch_add, unsigned long long, ".add.u64", "l")
IRIS_PTX_RMW(fetch_add, float, ".add.f32", "f")
IRIS_PTX_RMW(fetch_add, double, ".add.f64", "d")
IRIS_PTX_RMW(fetch_min, int, ".min.s32", "r")
IRIS_PTX_RMW(fetch_min, unsigned int, ".min.u32", "r")
IRIS_PTX_RMW(fetch_min, long long, ".min.s64", "l")
IRIS_PTX_RMW(fetch_min, unsigned long long, ".min.u64", "l")
IRIS_PTX_RMW(fetch_max, int, ".max.s32", "r")
IRIS_PTX_RMW(fetch_max, unsigned int, ".max.u32", "r")
IRIS_PTX_RMW(fetch_max, long long, ".max.s64", "l")
IRIS_PTX_RMW(fetch_max, unsigned long long, ".max.u64", "l")
IRIS_PTX_RMW(fetch_and, unsigned int, ".and.b32", "r")
IRIS_PTX_RMW(fetch_and, unsigned long long, ".and.b64", "l")
IRIS_PTX_RMW(fetch_or, unsigned int, ".or.b32", "r")
IRIS_PTX_RMW(fetch_or, unsigned long long, ".or.b64", "l")
IRIS_PTX_RMW(fetch_xor, unsigned int, ".xor.b32", "r")
IRIS_PTX_RMW(fetch_xor, unsigned long long, ".xor.b64", "l")
IRIS_PTX_RMW(exchange, unsigned int, ".exch.b32", "r")
IRIS_PTX_RMW(exchange, unsigned long long, ".exch.b64", "l")

#define IRIS_NATIVE_INT_MINMAX 1
#define IRIS_NATIVE_FLOAT_ADD 1

// 16-bit float adds on their bit patterns: f16 since sm_70, bf16 since sm_90.
#define IRIS_NATIVE_HALF_ADD 1
IRIS_PTX_RMW(fetch_add_half_bits, unsigned short, ".add.noftz.f16", "h")
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define IRIS_NATIVE_BFLOAT16_ADD 1
IRIS_PTX_RMW(fetch_add_bfloat16_bits, unsigned short, ".add.noftz.bf16", "h")
#endif

IRIS_DEVICE unsigned int cas(unsigned int* p, unsigned int cmp, unsigned int v, Semantic sem, Scope scope) {
  unsigned int old;
  IRIS_PTX_DISPATCH(sem, scope, IRIS_PTX_CAS, ".cas.b32", "r")
  return old;
}
IRIS_DEVICE unsigned long long cas(unsigned long long* p, unsigned long long cmp, unsigned long long v, Semantic sem,
                                   Scope scope) {
  unsigned long long old;
  IRIS_PTX_DISPATCH(sem, scope, IRIS_PTX_CAS, ".cas.b64", "l")
  return old;
}

// Atomic loads and stores of 2, 4 or 8 bytes, any type (moved as bits).
template <class T>
IRIS_DEVICE T atomic_load(const T* p, Semantic sem, Scope scope) {
  if constexpr (sizeof(T) == 2) {
    unsigned short v;
    IRIS_PTX_LOAD_DISPATCH(sem, scope, ".b16", "h")
    return bit_cast<T>(v);
  } else if constexpr (sizeof(T) == 4) {
    unsigned int v;
    IRIS_PTX_LOAD_DISPATCH(sem, scope, ".b32", "r")
    return bit_cast<T>(v);
  } else {
    static_assert(sizeof(T) == 8, "iris: atomic loads are 2, 4 or 8 bytes");
    unsigned long long v;
    IRIS_PTX_LOAD_DISPATCH(sem, scope, ".b64", "l")
    return bit_cast<T>(v);
  }
}

template <class T>
IRIS_DEVICE void atomic_store(T* p, T value, Semantic sem, Scope scope) {
  if constexpr (sizeof(T) == 2) {
    unsigned short v = bit_cast<unsigned short>(value);
    IRIS_PTX_STORE_DISPATCH(sem, scope, ".b16", "h")
  } else if constexpr (sizeof(T) == 4) {
    unsigned int v = bit_cast<unsigned int>(value);
    IRIS_PTX_STORE_DISPATCH(sem, scope, ".b32", "r")
  } else {
    static_assert(sizeof(T) == 8, "iris: atomic stores are 2, 4 or 8 bytes");
    unsigned long long v = bit_cast<unsigned long long>(value);
    IRIS_PTX_STORE_DISPATCH(sem, scope, ".b64", "l")
  }
}

// fence.acq_rel at the scope; a relaxed fence orders nothing.
IRIS_DEVICE void fence_impl(Semantic sem, Scope scope) {
  if (sem == relaxed) return;
  IRIS_PTX_SCOPES(".acq_rel", scope, IRIS_PTX_FENCE, 0)
}

// Backs off a spinning thread so the others (and the memory system) make progress.
IRIS_DEVICE void pause() { __nanosleep(64); }

IRIS_DEVICE unsigned long long clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Ends the kernel with a device fault: the host reports it at the next synchronization.
[[noreturn]] IRIS_DEVICE void trap(const char*) {
  __threadfence_system();
  __trap();
  __builtin_unreachable();
}

}  // namespace detail
}  // namespace iris

#undef IRIS_PTX_RMW

#endif  // IRIS_IMPL_ORDER_CUDA_HPP
