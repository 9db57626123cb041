// Which platform this snippet is compiled for, and what each one lacks that the others have: the one
// place with platform #ifs besides the memory-order primitives (order_*.hpp).
//
//   IRIS_PLATFORM_HIP   hiprtc (HIP C++ for AMD GPUs); hip_runtime.h and hip_fp16.h are pre-included
//   IRIS_PLATFORM_CUDA  NVRTC (or nvcc); cuda_fp16.h/cuda_bf16.h come from the CUDA include directory
//   IRIS_PLATFORM_CPU   the host C++ compiler, for the cpu backend's executor (cpu_shim.hpp)
#ifndef IRIS_IMPL_PLATFORM_HPP
#define IRIS_IMPL_PLATFORM_HPP

#if defined(__HIPCC_RTC__) || defined(__HIP__)
#define IRIS_PLATFORM_HIP 1
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define IRIS_PLATFORM_CUDA 1
#else
#define IRIS_PLATFORM_CPU 1
#endif

// ---- fixed-width integers ---------------------------------------------------------------------------
#if defined(__CUDACC_RTC__)
// NVRTC has no <stdint.h>; the LP64 types, as the host has them.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#elif defined(__HIPCC_RTC__)
// hiprtc's runtime header defines the 32- and 64-bit types (as long long); the narrow ones are missing.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif

// ---- function qualifiers ----------------------------------------------------------------------------
#if defined(IRIS_PLATFORM_CPU)
#include "cpu_shim.hpp"  // __global__, threadIdx, __syncthreads, __shared__, ... on the host
#define IRIS_DEVICE inline
#define IRIS_HOST_DEVICE inline
#else
#define IRIS_DEVICE __device__ __forceinline__
#define IRIS_HOST_DEVICE __host__ __device__ __forceinline__
#endif
// A kernel parameter the device reads where the launch put it (CUDA 11.7+: a TMA descriptor, gemm.hpp's
// TensorMap); the other platforms copy parameters as they like, so the qualifier means nothing there.
#if !defined(IRIS_PLATFORM_CUDA) && !defined(__grid_constant__)
#define __grid_constant__
#endif

// ---- 16-bit floats ------------------------------------------------------------------------------------
#if defined(IRIS_PLATFORM_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
namespace iris {
using half = __half;
using bfloat16 = __nv_bfloat16;
}  // namespace iris
#elif defined(IRIS_PLATFORM_HIP)
#include "float16.hpp"  // iris::bfloat16: HIP 5.2 has no __hip_bfloat16
namespace iris {
using half = __half;
using bfloat16 = detail::BFloat16;
}  // namespace iris
#else
#include "float16.hpp"  // both in software on the host
namespace iris {
using half = detail::Half;
using bfloat16 = detail::BFloat16;
}  // namespace iris
#endif

// ---- warp-level operations: CUDA's spellings on HIP, HIP's on CUDA (the cpu backend's: cpu_shim.hpp) ----
#if !defined(IRIS_PLATFORM_CPU)
#include "warp_gpu.hpp"
#endif

// ---- HIP spellings users write, wherever the platform lacks them (hiprtc 5.2 lacks some too) -----------
#ifndef hipThreadIdx_x
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#endif
#ifndef hipBlockIdx_x
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#endif
#ifndef hipBlockDim_x
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#endif
#ifndef hipGridDim_x
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)
#endif
#if !defined(HIP_DYNAMIC_SHARED) && !defined(IRIS_PLATFORM_CPU)
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#endif

// assert() in kernels: NVRTC has one; hiprtc and the cpu backend get one that ends the kernel with a
// device fault (never the process).
#if defined(IRIS_PLATFORM_HIP) && !defined(assert)
#define assert(condition)                                                                              \
  ((condition) ? (void)0                                                                               \
               : (printf("%s:%d: assertion '%s' failed\n", __FILE__, __LINE__, #condition), __builtin_trap()))
#endif

// ---- small type traits (run-time compilers have no standard library) ----------------------------------
namespace iris {
namespace detail {
template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };

// Integer types atomics accept, by size and signedness (HIP's int64_t is long long, the host's long).
template <class T> struct atomic_int { static constexpr bool value = false; };
template <> struct atomic_int<int> { static constexpr bool value = true; static constexpr bool is_signed = true; };
template <> struct atomic_int<unsigned int> { static constexpr bool value = true; static constexpr bool is_signed = false; };
template <> struct atomic_int<long> { static constexpr bool value = sizeof(long) == 8; static constexpr bool is_signed = true; };
template <> struct atomic_int<unsigned long> { static constexpr bool value = sizeof(long) == 8; static constexpr bool is_signed = false; };
template <> struct atomic_int<long long> { static constexpr bool value = true; static constexpr bool is_signed = true; };
template <> struct atomic_int<unsigned long long> { static constexpr bool value = true; static constexpr bool is_signed = false; };

template <class T> struct is_float16 {
  static constexpr bool value = is_same<T, ::iris::half>::value || is_same<T, ::iris::bfloat16>::value;
};
template <class T> struct is_float32_64 {
  static constexpr bool value = is_same<T, float>::value || is_same<T, double>::value;
};

// Reinterprets the bits of a value as another type of the same size (C++20's std::bit_cast; the
// builtin is in NVRTC, clang and GCC alike).
template <class To, class From>
IRIS_HOST_DEVICE To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "iris::detail::bit_cast: sizes differ");
  return __builtin_bit_cast(To, from);
}

#if defined(IRIS_PLATFORM_CUDA)
// A shared-memory pointer as the 32-bit address PTX's shared-state-space instructions take (cp.async,
// ldmatrix, wgmma descriptors, the bulk-copy unit and its mbarriers).
IRIS_DEVICE unsigned int shared_address(const void* p) { return static_cast<unsigned int>(__cvta_generic_to_shared(p)); }
#endif

// ---- starting early (programmatic dependent launch) ---------------------------------------------------
// A kernel declared `__global__ void IRIS_EARLY_START name(...)` may be launched so that it starts
// while the kernel ahead of it on the stream is still running (CUDA's programmatic dependent launch,
// sm_90 and later; the registry asks for it, IRIS_EARLY_START=0 turns it off). Its blocks then wait in
// wait_for_earlier_kernels() until that kernel has ended and its writes are visible, so they must call it
// before they read or write any memory; what they save is the launch's latency between the two kernels.
// allow_later_kernels() lets the kernel after this one start early (if it was launched so): any point
// is correct, since that kernel still waits for this one's end. Elsewhere both do nothing: a kernel runs
// after the one ahead of it has ended.
#define IRIS_EARLY_START
IRIS_DEVICE void wait_for_earlier_kernels() {
#if defined(IRIS_PLATFORM_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
IRIS_DEVICE void allow_later_kernels() {
#if defined(IRIS_PLATFORM_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The unsigned integer of a size: what atomics on floats and 16-bit types operate on.
template <int Bytes> struct uint_of_size;
template <> struct uint_of_size<2> { typedef unsigned short type; };
template <> struct uint_of_size<4> { typedef unsigned int type; };
template <> struct uint_of_size<8> { typedef unsigned long long type; };
}  // namespace detail
}  // namespace iris

// ---- the module state every compiled module carries ---------------------------------------------------
#include "abi.h"

// Written by the host right after the module is loaded (Backend::Module::write_global): rank, heap
// bases, the mailbox failed waits report into, and the wait budget. One per module, so it is defined
// here, in the module's only translation unit.
#if defined(IRIS_PLATFORM_CPU)
extern "C" {
__attribute__((visibility("default"))) ::iris::abi::ModuleState __iris_module_state;
}
#else
extern "C" {
__device__ ::iris::abi::ModuleState __iris_module_state;
}
#endif

#endif  // IRIS_IMPL_PLATFORM_HPP
