// Warp-level operations on the cpu backend: NVIDIA's 32-lane warps, whatever HIP's spelling says.
// Each call hands the lane's value to the executor (abi::CpuRuntime::warp), which parks the thread
// until every lane its mask names (that has not exited) arrives, and returns what a GPU would
// (src/runtime/cpu/cpu_warps.hpp has the rules). Values of 1, 2, 4 and 8 bytes move as bits, so
// iris::half, iris::bfloat16, double and 64-bit integers shuffle like ints.
#ifndef IRIS_IMPL_WARP_CPU_HPP
#define IRIS_IMPL_WARP_CPU_HPP

namespace iris {
namespace cpu {

inline uint64_t warp(uint32_t kind, unsigned int mask, uint64_t value, int lane_arg = 0, int width = 32) {
  const abi::CpuWarpOp op{kind, mask, value, lane_arg, width};
  const uint64_t result = runtime->warp(&op);
  state = runtime->current();  // other threads of the block ran meanwhile
  return result;
}

template <class T>
inline T shuffle(uint32_t kind, unsigned int mask, T var, int lane_arg, int width) {
  static_assert(sizeof(T) <= 8, "warp shuffles move values of 1, 2, 4 or 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &var, sizeof(T));
  bits = warp(kind, mask, bits, lane_arg, width);
  memcpy(&var, &bits, sizeof(T));
  return var;
}

inline unsigned int lane_id() {
  const abi::CpuThreadState* s = state;
  return (s->thread_idx.x + s->block_dim.x * (s->thread_idx.y + s->block_dim.y * s->thread_idx.z)) % 32u;
}

}  // namespace cpu
}  // namespace iris

// ---- CUDA's spellings ------------------------------------------------------------------------------
template <class T>
inline T __shfl_sync(unsigned int mask, T var, int src_lane, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_IDX, mask, var, src_lane, width);
}
template <class T>
inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_UP, mask, var, static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_DOWN, mask, var, static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_XOR, mask, var, lane_mask, width);
}
inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  return static_cast<unsigned int>(::iris::cpu::warp(IRIS_CPU_WARP_BALLOT, mask, predicate != 0));
}
inline int __any_sync(unsigned int mask, int predicate) {
  return static_cast<int>(::iris::cpu::warp(IRIS_CPU_WARP_ANY, mask, predicate != 0));
}
inline int __all_sync(unsigned int mask, int predicate) {
  return static_cast<int>(::iris::cpu::warp(IRIS_CPU_WARP_ALL, mask, predicate != 0));
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) { ::iris::cpu::warp(IRIS_CPU_WARP_SYNC, mask, 0); }
// The lanes that reach an __activemask together: those of the warp that get there before the others
// exit or wait elsewhere (a branch's lanes, or the whole warp where it has not diverged).
inline unsigned int __activemask() {
  return static_cast<unsigned int>(::iris::cpu::warp(IRIS_CPU_WARP_ACTIVE | IRIS_CPU_WARP_IMPLICIT, ~0u, 0));
}

// ---- HIP's spellings: no mask (the lanes that arrive take part); __ballot is 64 bits wide on AMD, of
// which the cpu backend's 32-lane warps fill the low half ------------------------------------------------
template <class T>
inline T __shfl(T var, int src_lane, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_IDX | IRIS_CPU_WARP_IMPLICIT, ~0u, var, src_lane, width);
}
template <class T>
inline T __shfl_up(T var, unsigned int delta, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_UP | IRIS_CPU_WARP_IMPLICIT, ~0u, var, static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_down(T var, unsigned int delta, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_DOWN | IRIS_CPU_WARP_IMPLICIT, ~0u, var, static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_xor(T var, int lane_mask, int width = warpSize) {
  return ::iris::cpu::shuffle(IRIS_CPU_WARP_SHFL_XOR | IRIS_CPU_WARP_IMPLICIT, ~0u, var, lane_mask, width);
}
inline unsigned long long __ballot(int predicate) {
  return ::iris::cpu::warp(IRIS_CPU_WARP_BALLOT | IRIS_CPU_WARP_IMPLICIT, ~0u, predicate != 0);
}
inline int __any(int predicate) {
  return static_cast<int>(::iris::cpu::warp(IRIS_CPU_WARP_ANY | IRIS_CPU_WARP_IMPLICIT, ~0u, predicate != 0));
}
inline int __all(int predicate) {
  return static_cast<int>(::iris::cpu::warp(IRIS_CPU_WARP_ALL | IRIS_CPU_WARP_IMPLICIT, ~0u, predicate != 0));
}
inline unsigned int __lane_id() { return ::iris::cpu::lane_id(); }

#endif  // IRIS_IMPL_WARP_CPU_HPP
