// Warp-level spellings each GPU platform lacks, so one snippet compiles everywhere (the cpu backend has
// both sets: warp_cpu.hpp):
//   - HIP (5.2 has no *_sync functions; later ROCm requires 64-bit masks): CUDA's __shfl*_sync,
//     __ballot_sync, __any_sync, __all_sync, __activemask and __syncwarp, on HIP's own shuffles and
//     ballots. The mask selects lanes of the ballot; shuffles ignore it, as ROCm's own versions do.
//     HIP's own __shfl* are wrapped too, so that they move 1- and 2-byte values as well.
//     Warps are 64 lanes on most AMD GPUs: a mask of 0xffffffff names the lower 32 only.
//   - CUDA (sm_70 and later dropped them): HIP's __shfl, __shfl_up, __shfl_down, __shfl_xor,
//     __ballot (64 bits wide, as on AMD), __any, __all and __lane_id, over the active lanes.
// Each name is a macro for a function of iris's, so a toolkit that declares its own never clashes.
#ifndef IRIS_IMPL_WARP_GPU_HPP
#define IRIS_IMPL_WARP_GPU_HPP

#if defined(IRIS_PLATFORM_HIP)
namespace iris {
namespace hip_warp {

// HIP shuffles 4- and 8-byte values; any value of up to 8 bytes (iris::half, iris::bfloat16, int8_t,
// ...) moves as the bits of an int or a long long.
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_bits(T var, Shuffle shuffle) {
  static_assert(sizeof(T) <= 8, "warp shuffles move values of 1, 2, 4 or 8 bytes");
  if constexpr (sizeof(T) <= 4) {
    int bits = 0;
    __builtin_memcpy(&bits, &var, sizeof(T));
    bits = shuffle(bits);
    __builtin_memcpy(&var, &bits, sizeof(T));
  } else {
    long long bits = 0;
    __builtin_memcpy(&bits, &var, sizeof(T));
    bits = shuffle(bits);
    __builtin_memcpy(&var, &bits, sizeof(T));
  }
  return var;
}

template <class T>
__device__ __forceinline__ T shfl(T var, int src_lane, int width = warpSize) {
  return shuffle_bits(var, [=](auto bits) { return __shfl(bits, src_lane, width); });
}
template <class T>
__device__ __forceinline__ T shfl_up(T var, unsigned int delta, int width = warpSize) {
  return shuffle_bits(var, [=](auto bits) { return __shfl_up(bits, delta, width); });
}
template <class T>
__device__ __forceinline__ T shfl_down(T var, unsigned int delta, int width = warpSize) {
  return shuffle_bits(var, [=](auto bits) { return __shfl_down(bits, delta, width); });
}
template <class T>
__device__ __forceinline__ T shfl_xor(T var, int lane_mask, int width = warpSize) {
  return shuffle_bits(var, [=](auto bits) { return __shfl_xor(bits, lane_mask, width); });
}
template <class Mask, class T>
__device__ __forceinline__ T shfl_sync(Mask, T var, int src_lane, int width = warpSize) {
  return shfl(var, src_lane, width);
}
template <class Mask, class T>
__device__ __forceinline__ T shfl_up_sync(Mask, T var, unsigned int delta, int width = warpSize) {
  return shfl_up(var, delta, width);
}
template <class Mask, class T>
__device__ __forceinline__ T shfl_down_sync(Mask, T var, unsigned int delta, int width = warpSize) {
  return shfl_down(var, delta, width);
}
template <class Mask, class T>
__device__ __forceinline__ T shfl_xor_sync(Mask, T var, int lane_mask, int width = warpSize) {
  return shfl_xor(var, lane_mask, width);
}
template <class Mask>
__device__ __forceinline__ unsigned long long ballot_sync(Mask mask, int predicate) {
  return __ballot(predicate) & static_cast<unsigned long long>(mask);
}
template <class Mask>
__device__ __forceinline__ int any_sync(Mask mask, int predicate) {
  return (__ballot(predicate) & static_cast<unsigned long long>(mask)) != 0;
}
template <class Mask>
__device__ __forceinline__ int all_sync(Mask mask, int predicate) {
  return (__ballot(!predicate) & static_cast<unsigned long long>(mask)) == 0;  // inactive lanes vote 0
}
__device__ __forceinline__ unsigned long long activemask() { return __ballot(1); }
// A wavefront runs in lockstep; the fences order the lanes' memory accesses around the barrier.
__device__ __forceinline__ void syncwarp(unsigned long long = ~0ull) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

}  // namespace hip_warp
}  // namespace iris

// HIP's own shuffles too, so that 1- and 2-byte values and iris::half shuffle as on the other platforms.
#define __shfl ::iris::hip_warp::shfl
#define __shfl_up ::iris::hip_warp::shfl_up
#define __shfl_down ::iris::hip_warp::shfl_down
#define __shfl_xor ::iris::hip_warp::shfl_xor
#define __shfl_sync ::iris::hip_warp::shfl_sync
#define __shfl_up_sync ::iris::hip_warp::shfl_up_sync
#define __shfl_down_sync ::iris::hip_warp::shfl_down_sync
#define __shfl_xor_sync ::iris::hip_warp::shfl_xor_sync
#define __ballot_sync ::iris::hip_warp::ballot_sync
#define __any_sync ::iris::hip_warp::any_sync
#define __all_sync ::iris::hip_warp::all_sync
#define __activemask ::iris::hip_warp::activemask
#define __syncwarp ::iris::hip_warp::syncwarp

#elif defined(IRIS_PLATFORM_CUDA)
namespace iris {
namespace cuda_warp {

template <class T>
__device__ __forceinline__ T shfl(T var, int src_lane, int width = warpSize) {
  return __shfl_sync(__activemask(), var, src_lane, width);
}
template <class T>
__device__ __forceinline__ T shfl_up(T var, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(__activemask(), var, delta, width);
}
template <class T>
__device__ __forceinline__ T shfl_down(T var, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(__activemask(), var, delta, width);
}
template <class T>
__device__ __forceinline__ T shfl_xor(T var, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(__activemask(), var, lane_mask, width);
}
__device__ __forceinline__ unsigned long long ballot(int predicate) { return __ballot_sync(__activemask(), predicate); }
__device__ __forceinline__ int any(int predicate) { return __any_sync(__activemask(), predicate); }
__device__ __forceinline__ int all(int predicate) { return __all_sync(__activemask(), predicate); }
__device__ __forceinline__ unsigned int lane_id() {
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

}  // namespace cuda_warp
}  // namespace iris

#define __shfl ::iris::cuda_warp::shfl
#define __shfl_up ::iris::cuda_warp::shfl_up
#define __shfl_down ::iris::cuda_warp::shfl_down
#define __shfl_xor ::iris::cuda_warp::shfl_xor
#define __ballot ::iris::cuda_warp::ballot
#define __any ::iris::cuda_warp::any
#define __all ::iris::cuda_warp::all
#define __lane_id ::iris::cuda_warp::lane_id
#endif

#endif  // IRIS_IMPL_WARP_GPU_HPP
