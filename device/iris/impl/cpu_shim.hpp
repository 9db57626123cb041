// The GPU programming model on the host, for the cpu backend: what CUDA/HIP compilers build in
// (threadIdx, __syncthreads, __shared__, vector types, device math) spelled for the host C++ compiler.
//
// How it maps (src/runtime/cpu/ runs it; docs/kernels.md explains it):
//   - every device thread runs on a fiber of the OS thread that runs its block; the executor hands the
//     kernel's entry wrapper the thread's CpuThreadState, kept in `state` below;
//   - __syncthreads() and spinning waits call back into the executor (abi::CpuRuntime), which switches
//     fibers; afterwards `state` is re-read, since another thread of the block ran meanwhile;
//   - __shared__ is `static thread_local`: a block runs on one OS thread from start to end, so a
//     thread-local is exactly "one per block in flight";
//   - extern __shared__ (dynamic shared memory) is rewritten by the cpu compiler into
//     IRIS_CPU_DYNAMIC_SHARED(type, name): a pointer to the executor's per-OS-thread buffer, whose
//     address never changes;
//   - warps are NVIDIA's 32 lanes (also for HIP's spellings, whose warps are 64 wide on AMD): a warp
//     collective (shuffle, vote, __syncwarp) parks its thread in the executor until the lanes it
//     names arrive (warp_cpu.hpp). Matches, warp reductions and __syncthreads_count/and/or are
//     compile errors that name the construct.
#ifndef IRIS_IMPL_CPU_SHIM_HPP
#define IRIS_IMPL_CPU_SHIM_HPP

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <type_traits>
#include <utility>

#include "abi.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __shared__ static thread_local
#define __constant__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define IRIS_CPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace iris {
namespace cpu {

// The executor's function table (set once when the module loads) and the running device thread.
inline const abi::CpuRuntime* runtime = nullptr;
inline thread_local abi::CpuThreadState* state = nullptr;

inline void* dynamic_shared() { return state->dynamic_shared; }

[[noreturn]] inline void trap(const char* reason) {
  runtime->trap(reason);
  __builtin_unreachable();
}

// A spinning thread lets the other threads of its block run (and, when none can, the OS).
inline void yield() {
  runtime->yield();
  state = runtime->current();
}

inline unsigned long long clock_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<unsigned long long>(now.tv_sec) * 1000000000ull + static_cast<unsigned long long>(now.tv_nsec);
}

// Calls `kernel` with the arguments args[i] points at (the launch's argument block), converting each
// to the declared parameter type. The entry wrappers the cpu compiler generates call this.
template <class... Params, size_t... I>
inline void invoke(void (*kernel)(Params...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<typename std::remove_reference<Params>::type*>(args[I])...);
}
template <class... Params>
inline void invoke(void (*kernel)(Params...), void** args) {
  invoke(kernel, args, std::index_sequence_for<Params...>{});
}

// Dependent false: a static_assert that fires only when the construct is used.
template <class... A> struct unsupported_on_cpu { static constexpr bool value = false; };

}  // namespace cpu
}  // namespace iris

IRIS_CPU_EXPORT void __iris_cpu_bind(const ::iris::abi::CpuRuntime* runtime) { ::iris::cpu::runtime = runtime; }

// exit(), abort() and their kin in a kernel end the launch with a device fault naming them (and the
// kernel), never the process: abort() was rc 134 with no message, exit(0) rc 0 with the rest of the
// script skipped. The cpu compiler links every module with --wrap for each of these names, so the
// kernel's calls (std::exit and std::abort included) come here; a SIGABRT from elsewhere in a kernel
// (an uncaught exception) is the executor's to catch.
extern "C" {
#define IRIS_CPU_NO_EXIT(name, ...)                                                                      \
  [[noreturn]] __attribute__((visibility("hidden"))) void __wrap_##name(__VA_ARGS__) {                   \
    ::iris::cpu::trap(#name "() called in a kernel: a kernel ends by returning (a device thread cannot end " \
                      "the process); report a failure with assert() or by writing it to memory");        \
  }
IRIS_CPU_NO_EXIT(exit, int)
IRIS_CPU_NO_EXIT(_exit, int)
IRIS_CPU_NO_EXIT(_Exit, int)
IRIS_CPU_NO_EXIT(quick_exit, int)
IRIS_CPU_NO_EXIT(abort, void)
#undef IRIS_CPU_NO_EXIT
}

// ---- thread geometry and barriers ------------------------------------------------------------------
#define threadIdx (::iris::cpu::state->thread_idx)
#define blockIdx (::iris::cpu::state->block_idx)
#define blockDim (::iris::cpu::state->block_dim)
#define gridDim (::iris::cpu::state->grid_dim)
#define warpSize 32

inline void __syncthreads() {
  ::iris::cpu::runtime->syncthreads();
  ::iris::cpu::state = ::iris::cpu::runtime->current();
}
[[noreturn]] inline void __trap() { ::iris::cpu::trap("__trap() called"); }
inline long long clock64() { return static_cast<long long>(::iris::cpu::clock_ns()); }
inline void __nanosleep(unsigned int) { ::iris::cpu::yield(); }

#include "warp_cpu.hpp"

#define IRIS_CPU_DYNAMIC_SHARED(type, name) \
  static thread_local type* const name = reinterpret_cast<type*>(::iris::cpu::dynamic_shared());
#define HIP_DYNAMIC_SHARED(type, name) IRIS_CPU_DYNAMIC_SHARED(type, name)
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

// assert() ends the kernel with a device fault naming the condition, never the process.
#undef assert
#define assert(condition) \
  ((condition) ? (void)0 : ::iris::cpu::trap("assertion '" #condition "' failed at " __FILE__ ":" IRIS_CPU_STR(__LINE__)))
#define IRIS_CPU_STR(x) IRIS_CPU_STR2(x)
#define IRIS_CPU_STR2(x) #x

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

// ---- vector types (the ones kernels use for 8- and 16-byte accesses) --------------------------------
#define IRIS_CPU_VECTOR2(name, T, align)                                         \
  struct __attribute__((aligned(align))) name { T x, y; };                       \
  inline name make_##name(T x, T y) { return name{x, y}; }
#define IRIS_CPU_VECTOR4(name, T, align)                                         \
  struct __attribute__((aligned(align))) name { T x, y, z, w; };                 \
  inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }
IRIS_CPU_VECTOR2(float2, float, 8)
IRIS_CPU_VECTOR4(float4, float, 16)
IRIS_CPU_VECTOR2(double2, double, 16)
IRIS_CPU_VECTOR2(int2, int, 8)
IRIS_CPU_VECTOR4(int4, int, 16)
IRIS_CPU_VECTOR2(uint2, unsigned int, 8)
IRIS_CPU_VECTOR4(uint4, unsigned int, 16)
IRIS_CPU_VECTOR2(longlong2, long long, 16)
IRIS_CPU_VECTOR2(ulonglong2, unsigned long long, 16)
IRIS_CPU_VECTOR4(char4, signed char, 4)
IRIS_CPU_VECTOR4(uchar4, unsigned char, 4)
#undef IRIS_CPU_VECTOR2
#undef IRIS_CPU_VECTOR4

// ---- device math and bit intrinsics -------------------------------------------------------------------
template <class A, class B>
inline auto min(A a, B b) -> decltype(a < b ? a : b) { return b < a ? b : a; }
template <class A, class B>
inline auto max(A a, B b) -> decltype(a < b ? a : b) { return a < b ? b : a; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
inline int __float_as_int(float f) { int v; memcpy(&v, &f, 4); return v; }
inline float __uint_as_float(unsigned int v) { float f; memcpy(&f, &v, 4); return f; }
inline unsigned int __float_as_uint(float f) { unsigned int v; memcpy(&v, &f, 4); return v; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; memcpy(&v, &d, 8); return v; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
template <class T> inline T __ldg(const T* p) { return *p; }

// ---- what the cpu backend cannot run: a compile error naming the construct -----------------------------
#define IRIS_CPU_UNSUPPORTED(name, what)                                                                 \
  template <class... A>                                                                                  \
  inline int name(A...) {                                                                                \
    static_assert(::iris::cpu::unsupported_on_cpu<A...>::value,                                          \
                  #name " (" what ") cannot run on the cpu backend: its warps have shuffles, votes and "  \
                  "__syncwarp only; run this kernel on a GPU backend or rewrite it with those, or with "     \
                  "__shared__ memory and __syncthreads()");                                              \
    return 0;                                                                                            \
  }
IRIS_CPU_UNSUPPORTED(__match_any_sync, "warp match")
IRIS_CPU_UNSUPPORTED(__match_all_sync, "warp match")
IRIS_CPU_UNSUPPORTED(__reduce_add_sync, "warp reduction")
IRIS_CPU_UNSUPPORTED(__reduce_min_sync, "warp reduction")
IRIS_CPU_UNSUPPORTED(__reduce_max_sync, "warp reduction")
IRIS_CPU_UNSUPPORTED(__syncthreads_count, "barrier with a block reduction")
IRIS_CPU_UNSUPPORTED(__syncthreads_and, "barrier with a block reduction")
IRIS_CPU_UNSUPPORTED(__syncthreads_or, "barrier with a block reduction")
#undef IRIS_CPU_UNSUPPORTED

#endif  // IRIS_IMPL_CPU_SHIM_HPP
