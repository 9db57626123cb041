// The NVIDIA path of gemm.hpp: warp-level mma.sync over fragments read with ldmatrix, operands staged
// by cp.async. The cpu backend compiles the same code over emulations of those four instructions (below,
// from the PTX manual's fragment layouts), so the tests there check the fragment arithmetic a GPU does.
//
// Eight warps cover the 128 x 128 tile as 2 (m) x 4 (n) warp tiles of 64 x 32: per step of 16 (16-bit
// inputs) or 8 (float, as tf32) of k, a warp holds 4 A fragments (m16) and 4 B fragments (n8) and
// issues 16 mma. Accumulator element e of a thread is mma tile (e / 16, e / 4 % 4), register e % 4.
#ifndef IRIS_IMPL_GEMM_MMA_HPP
#define IRIS_IMPL_GEMM_MMA_HPP

namespace iris {
namespace gemm {
namespace detail {

#if defined(IRIS_PLATFORM_CUDA)

IRIS_DEVICE unsigned int shared_address(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, the first `bytes` of them read and the rest zero.
IRIS_DEVICE void copy16_async(void* to, const void* from, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(to)), "l"(from), "r"(bytes)
               : "memory");
}
IRIS_DEVICE void commit_async() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
IRIS_DEVICE void wait_async() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Four 8 x 8 matrices of 16-bit elements; lanes 8i .. 8i + 7 give the row addresses of matrix i.
IRIS_DEVICE void load_matrices(uint32_t (&r)[4], const void* row, bool transposed) {
  if (transposed) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
  }
}

// d += a b for one m16n8k16 tile (T: half or bfloat16).
template <class T>
IRIS_DEVICE void mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (::iris::detail::is_same<T, ::iris::bfloat16>::value) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// d += a b for one m16n8k8 tile of tf32 values.
IRIS_DEVICE void mma1688(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Rounded to tf32 (10 bits of mantissa), to nearest with ties away from zero, as cvt.rna does.
IRIS_DEVICE uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

#else  // the cpu backend: the same instructions, emulated

// cp.async of 16 bytes requires both addresses on 16-byte boundaries; a GPU given others copies other
// bytes without a fault, so the emulation refuses them rather than copy what was meant.
inline void copy16_async(void* to, const void* from, int bytes) {
  if ((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from)) % 16 != 0) {
    ::iris::detail::trap("iris::gemm: a 16-byte asynchronous copy (cp.async) from or to an address off a 16-byte "
                         "boundary, which a GPU does not copy as asked");
  }
  memcpy(to, from, static_cast<size_t>(bytes));
  memset(static_cast<uint8_t*>(to) + bytes, 0, static_cast<size_t>(16 - bytes));
}
inline void commit_async() {}
template <int Pending>
inline void wait_async() {}

// A warp's lanes swap operands through their own slots here: write, __syncwarp, read what the
// instruction gives this lane. The __syncwarp before writing keeps a fast lane from overwriting slots a
// slow lane still reads.
inline uint32_t* warp_slots() {
  __shared__ uint32_t slots[32][32][8];  // warps of the largest block, lanes, words
  return &slots[thread_index() / 32][0][0];
}

inline int lane_index() { return thread_index() % 32; }

inline void load_matrices(uint32_t (&r)[4], const void* row, bool transposed) {
  uint32_t* slots = warp_slots();
  const int lane = lane_index();
  __syncwarp();
  memcpy(&slots[lane * 8], &row, sizeof row);
  __syncwarp();
  auto row_of = [&](int source) {
    const uint8_t* p;
    memcpy(&p, &slots[source * 8], sizeof p);
    return p;
  };
  for (int i = 0; i < 4; ++i) {
    if (!transposed) {  // lane gets row lane / 4 of matrix i, 16-bit elements 2 (lane % 4) and the next
      memcpy(&r[i], row_of(8 * i + lane / 4) + (lane % 4) * 4, 4);
    } else {  // the same of the transposed matrix: column lane / 4 of stored rows 2 (lane % 4) and the next
      uint16_t low, high;
      memcpy(&low, row_of(8 * i + (lane % 4) * 2) + (lane / 4) * 2, 2);
      memcpy(&high, row_of(8 * i + (lane % 4) * 2 + 1) + (lane / 4) * 2, 2);
      r[i] = static_cast<uint32_t>(low) | static_cast<uint32_t>(high) << 16;
    }
  }
}

// The fragments of all lanes, for the lane's four results (rows g and g + 8, columns 2t and 2t + 1,
// g = lane / 4, t = lane % 4). `a_value(slots, row, k)` and `b_value(slots, k, column)` read an element
// of the fragments from the lanes that hold it.
template <int K, class AValue, class BValue>
inline void emulate_mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], AValue a_value, BValue b_value) {
  uint32_t* slots = warp_slots();
  const int lane = lane_index();
  __syncwarp();
  for (int i = 0; i < 4; ++i) slots[lane * 8 + i] = a[i];
  slots[lane * 8 + 4] = b[0];
  slots[lane * 8 + 5] = b[1];
  __syncwarp();
  const int g = lane / 4, t = lane % 4;
  for (int r = 0; r < 4; ++r) {
    const int row = g + (r / 2) * 8, column = 2 * t + r % 2;
    float sum = d[r];
    for (int k = 0; k < K; ++k) sum += a_value(slots, row, k) * b_value(slots, k, column);
    d[r] = sum;
  }
}

template <class T>
inline float from_bits16(uint32_t word, int high) {
  const uint16_t bits = static_cast<uint16_t>(high ? word >> 16 : word & 0xffffu);
  return ::iris::detail::is_same<T, ::iris::bfloat16>::value ? ::iris::detail::bfloat16_bits_to_float(bits)
                                                             : ::iris::detail::half_bits_to_float(bits);
}

// m16n8k16: a register r holds A rows g (+8 for r odd) and columns 2t, 2t + 1 (+8 for r >= 2); b
// register r holds B rows 2t, 2t + 1 (+8 for r = 1) of column g; the lower column or row in the low half.
template <class T>
inline void mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  emulate_mma<16>(
      d, a, b,
      [](const uint32_t* s, int row, int k) {
        return from_bits16<T>(s[(4 * (row % 8) + (k % 8) / 2) * 8 + (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)], k % 2);
      },
      [](const uint32_t* s, int k, int column) {
        return from_bits16<T>(s[(4 * column + (k % 8) / 2) * 8 + 4 + (k >= 8 ? 1 : 0)], k % 2);
      });
}

// m16n8k8 on tf32: a register r holds A row g (+8 for r odd), column t (+4 for r >= 2); b register r
// holds B row t (+4 for r = 1) of column g.
inline void mma1688(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  emulate_mma<8>(
      d, a, b,
      [](const uint32_t* s, int row, int k) {
        return ::iris::detail::bits_float(s[(4 * (row % 8) + k % 4) * 8 + (row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)]);
      },
      [](const uint32_t* s, int k, int column) {
        return ::iris::detail::bits_float(s[(4 * column + k % 4) * 8 + 4 + (k >= 4 ? 1 : 0)]);
      });
}

inline uint32_t to_tf32(float x) {
  const uint32_t bits = ::iris::detail::float_bits(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) return bits;  // infinities and NaN stay as they are
  return (bits + 0x1000u) & 0xffffe000u;                  // half an ulp of tf32 up, then cut: ties away
}

#endif

// ---- the block's step of k, on staged tiles (gemm_layout.hpp) -------------------------------------------

IRIS_DEVICE float* fragment(Accumulator& acc, int mi, int ni) { return &acc.v[(mi * 4 + ni) * 4]; }

// Where this lane's ldmatrix rows are in the staged tiles, for each of the two k16 steps of a 16-bit
// stage and each fragment: computed once per multiply (the swizzle and the operands' layouts do not
// change along k), so the k loop's only address arithmetic is the stage's base.
struct StepPlan {
  bool a_k_major, b_k_major;
  int a[2][4];  // A fragment mi at k16 step s
  int b[2][2];  // B fragment pair nj at k16 step s
};

template <class T>
IRIS_DEVICE StepPlan plan_steps(bool a_k_major, bool b_k_major) {
  StepPlan p{a_k_major, b_k_major, {}, {}};
  if constexpr (sizeof(T) == 2) {
    const int t = thread_index(), warp = t / 32, lane = t % 32;
    const int wm = warp / 4, wn = warp % 4;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const int kk = s * 16;
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int m0 = wm * 64 + mi * 16;
        // Matrices: rows m0..m0+7 and m0+8..m0+15, at k kk..kk+7 then kk+8..kk+15 (the A fragment's order).
        p.a[s][mi] = a_k_major ? offset(m0 + lane % 16, (kk + (lane / 16) * 8) / 8, 4)
                               : offset(kk + lane % 8 + (lane / 16) * 8, (m0 + ((lane / 8) % 2) * 8) / 8, 16);
      }
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        const int n0 = wn * 32 + nj * 16;
        // Matrices: columns n0..n0+7 at k kk.., kk+8.., then columns n0+8..n0+15 likewise.
        p.b[s][nj] = b_k_major ? offset(n0 + lane % 8 + (lane / 16) * 8, (kk + ((lane / 8) % 2) * 8) / 8, 4)
                               : offset(kk + lane % 16, (n0 + (lane / 16) * 8) / 8, 16);
      }
    }
  }
  return p;
}

template <class T>
IRIS_DEVICE void compute_step(Accumulator& acc, const uint8_t* a, const uint8_t* b, const StepPlan& p) {
  const int t = thread_index(), lane = t % 32;
  if constexpr (sizeof(T) == 2) {
    static_assert(Shape<T>::kK == 32, "a 16-bit stage is two k16 steps");
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) load_matrices(af[mi], a + p.a[s][mi], !p.a_k_major);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        uint32_t r[4];
        load_matrices(r, b + p.b[s][nj], !p.b_k_major);
        bf[2 * nj][0] = r[0];
        bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2];
        bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          mma16816<T>(*reinterpret_cast<float(*)[4]>(fragment(acc, mi, ni)), af[mi], bf[ni]);
        }
      }
    }
  } else {
    const int warp = t / 32, wm = warp / 4, wn = warp % 4;
    const int g = lane / 4, q = lane % 4;
#pragma unroll
    for (int kk = 0; kk < Shape<T>::kK; kk += 8) {
      uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int m0 = wm * 64 + mi * 16;
        af[mi][0] = to_tf32(staged<float>(a, p.a_k_major, m0 + g, kk + q));
        af[mi][1] = to_tf32(staged<float>(a, p.a_k_major, m0 + g + 8, kk + q));
        af[mi][2] = to_tf32(staged<float>(a, p.a_k_major, m0 + g, kk + q + 4));
        af[mi][3] = to_tf32(staged<float>(a, p.a_k_major, m0 + g + 8, kk + q + 4));
      }
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const int n0 = wn * 32 + ni * 8;
        bf[ni][0] = to_tf32(staged<float>(b, p.b_k_major, n0 + g, kk + q));
        bf[ni][1] = to_tf32(staged<float>(b, p.b_k_major, n0 + g, kk + q + 4));
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma1688(*reinterpret_cast<float(*)[4]>(fragment(acc, mi, ni)), af[mi], bf[ni]);
      }
    }
  }
}

// Where accumulator element e of this thread is in the tile: the m16n8 C fragment (rows g and g + 8,
// columns 2t and 2t + 1) of warp tile (wm, wn)'s mma tile (e / 16, e / 4 % 4).
IRIS_DEVICE void position(int e, int& i, int& j) {
  const int t = thread_index(), warp = t / 32, lane = t % 32;
  const int mi = e / 16, ni = (e / 4) % 4, r = e % 4;
  i = (warp / 4) * 64 + mi * 16 + lane / 4 + (r / 2) * 8;
  j = (warp % 4) * 32 + ni * 8 + 2 * (lane % 4) + r % 2;
}

}  // namespace detail
}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_MMA_HPP
