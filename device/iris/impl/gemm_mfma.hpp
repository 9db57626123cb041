// The AMD path of gemm.hpp (gfx90a and later): MFMA 32x32 instructions on 64-lane wavefronts.
//
// Four wavefronts cover the 128 x 128 tile as 2 x 2 wave tiles of 64 x 64, each 2 x 2 MFMA tiles of 32 x
// 32. Per MFMA (AMD's matrix instruction layouts): lane l holds A row l % 32 and B column l % 32 at k
// (l / 32) * 4 .. + 3 (16-bit: 32x32x8) or k l / 32 (float: 32x32x2), and result registers r = 0..15 of
// column l % 32, rows 8 (r / 4) + 4 (l / 32) + r % 4. Accumulator element e of a thread is MFMA tile
// e / 16 (row-major in the wave tile), register e % 16. Operands are staged synchronously (no
// asynchronous global-to-LDS copy is used).
#ifndef IRIS_IMPL_GEMM_MFMA_HPP
#define IRIS_IMPL_GEMM_MFMA_HPP

namespace iris {
namespace gemm {
namespace detail {

typedef _Float16 mfma_half4 __attribute__((ext_vector_type(4)));
typedef short mfma_short4 __attribute__((ext_vector_type(4)));
typedef float mfma_float16 __attribute__((ext_vector_type(16)));

IRIS_DEVICE void copy16_async(void* to, const void* from, int bytes) {
  if (bytes == 16) {
    *static_cast<uint4*>(to) = *static_cast<const uint4*>(from);
    return;
  }
  uint8_t* out = static_cast<uint8_t*>(to);
  const uint8_t* in = static_cast<const uint8_t*>(from);
  for (int i = 0; i < 16; ++i) out[i] = i < bytes ? in[i] : 0;
}
IRIS_DEVICE void commit_async() {}
template <int Pending>
IRIS_DEVICE void wait_async() {}

// Four consecutive k of one row (A) or column (B) of a staged 16-bit tile, as the MFMA operand's bits.
template <class T>
IRIS_DEVICE mfma_short4 four_of_k(const uint8_t* tile, bool k_major, int outer, int k) {
  mfma_short4 v;
  if (k_major) {  // one 8-byte read: k is a multiple of 4, so the four never straddle a 16-byte chunk
    v = *reinterpret_cast<const mfma_short4*>(tile + offset(outer, k / 8, 4) + (k % 8) * 2);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = ::iris::detail::bit_cast<short>(staged<T>(tile, false, outer, k + j));
  }
  return v;
}

IRIS_DEVICE mfma_float16 load_tile(const Accumulator& acc, int ti) {
  mfma_float16 c;
#pragma unroll
  for (int r = 0; r < 16; ++r) c[r] = acc.v[ti * 16 + r];
  return c;
}
IRIS_DEVICE void save_tile(Accumulator& acc, int ti, const mfma_float16& c) {
#pragma unroll
  for (int r = 0; r < 16; ++r) acc.v[ti * 16 + r] = c[r];
}

struct StepPlan {
  bool a_k_major, b_k_major;
};
template <class T>
IRIS_DEVICE StepPlan plan_steps(bool a_k_major, bool b_k_major) { return StepPlan{a_k_major, b_k_major}; }

template <class T>
IRIS_DEVICE void compute_step(Accumulator& acc, const uint8_t* a, const uint8_t* b, const StepPlan& plan) {
  const bool a_k_major = plan.a_k_major, b_k_major = plan.b_k_major;
  const int t = thread_index(), wave = t / 64, lane = t % 64;
  const int wm = wave / 2, wn = wave % 2, i = lane % 32;
  mfma_float16 c[4];
#pragma unroll
  for (int ti = 0; ti < 4; ++ti) c[ti] = load_tile(acc, ti);
  if constexpr (sizeof(T) == 2) {
    const int kq = (lane / 32) * 4;
#pragma unroll
    for (int kk = 0; kk < Shape<T>::kK; kk += 8) {
      mfma_short4 av[2], bv[2];
#pragma unroll
      for (int tm = 0; tm < 2; ++tm) av[tm] = four_of_k<T>(a, a_k_major, wm * 64 + tm * 32 + i, kk + kq);
#pragma unroll
      for (int tn = 0; tn < 2; ++tn) bv[tn] = four_of_k<T>(b, b_k_major, wn * 64 + tn * 32 + i, kk + kq);
#pragma unroll
      for (int ti = 0; ti < 4; ++ti) {
        if constexpr (::iris::detail::is_same<T, ::iris::bfloat16>::value) {
          c[ti] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av[ti / 2], bv[ti % 2], c[ti], 0, 0, 0);
        } else {
          c[ti] = __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(mfma_half4, av[ti / 2]),
                                                       __builtin_bit_cast(mfma_half4, bv[ti % 2]), c[ti], 0, 0, 0);
        }
      }
    }
  } else {
    const int kq = lane / 32;
#pragma unroll
    for (int kk = 0; kk < Shape<T>::kK; kk += 2) {
      float av[2], bv[2];
#pragma unroll
      for (int tm = 0; tm < 2; ++tm) av[tm] = staged<float>(a, a_k_major, wm * 64 + tm * 32 + i, kk + kq);
#pragma unroll
      for (int tn = 0; tn < 2; ++tn) bv[tn] = staged<float>(b, b_k_major, wn * 64 + tn * 32 + i, kk + kq);
#pragma unroll
      for (int ti = 0; ti < 4; ++ti) c[ti] = __builtin_amdgcn_mfma_f32_32x32x2f32(av[ti / 2], bv[ti % 2], c[ti], 0, 0, 0);
    }
  }
#pragma unroll
  for (int ti = 0; ti < 4; ++ti) save_tile(acc, ti, c[ti]);
}

IRIS_DEVICE void position(const Accumulator&, int e, int& i, int& j) {  // one layout on AMD
  const int t = thread_index(), wave = t / 64, lane = t % 64;
  const int ti = e / 16, r = e % 16;
  i = (wave / 2) * 64 + (ti / 2) * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
  j = (wave % 2) * 64 + (ti % 2) * 32 + lane % 32;
}

}  // namespace detail
}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_MFMA_HPP
