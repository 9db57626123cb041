// The NVIDIA path of gemm.hpp: warp-level mma.sync over fragments read with ldmatrix, operands staged
// by cp.async. The cpu backend compiles the same code over emulations of those four instructions (below,
// from the PTX manual's fragment layouts), so the tests there check the fragment arithmetic a GPU does.
//
// Eight warps cover the 128 x 128 tile as 2 (m) x 4 (n) warp tiles of 64 x 32: per step of 16 (16-bit
// inputs) or 8 (float, as tf32) of k, a warp holds 4 A fragments (m16) and 4 B fragments (n8) and
// issues 16 mma. Accumulator element e of a thread is mma tile (e / 16, e / 4 % 4), register e % 4.
//
// On sm_90a (IRIS_GEMM_WGMMA, gemm_layout.hpp) 16-bit inputs take Hopper's wgmma instead: the two
// warpgroups (warps 0-3, 4-7) each compute 64 rows x all 128 columns as wgmma m64n128k16 reading both
// operands from the staged tiles through shared-memory descriptors, two per stage, so no fragments are
// loaded into registers (faster than mma.sync at two blocks per SM, unless ptxas serializes wgmma in a
// function the kernel calls: docs/perf.md, "The GEMM tile on wgmma"). Accumulator element e of a thread is then warp w's rows
// 16 w .. 16 w + 15, columns 8 (e / 4) .. + 7, in the m16n8 C fragment's order (register e % 4).
// float32 stays on mma.sync there, so one kernel can hold both layouts (Accumulator::layout).
#ifndef IRIS_IMPL_GEMM_MMA_HPP
#define IRIS_IMPL_GEMM_MMA_HPP

namespace iris {
namespace gemm {
namespace detail {

#if defined(IRIS_PLATFORM_CUDA)

using ::iris::detail::shared_address;

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
IRIS_DEVICE StepPlan fragment_plan(bool a_k_major, bool b_k_major) {
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

#if defined(IRIS_GEMM_WGMMA)
// ---- sm_90a, 16-bit inputs: the block's step of k as wgmma -------------------------------------------

// Makes this thread's generic-proxy writes to shared memory (cp.async's, stage()'s stores) visible to
// the async proxy, through which wgmma reads its operands.
IRIS_DEVICE void fence_async_proxy() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// An operand's shared-memory matrix descriptor, start address 0 (the stage's is added per step): the
// leading and stride byte offsets (bits 16-29, 32-45, in 16-byte units) and the swizzle (bits 62-63:
// 1 = 128-byte, 2 = 64-byte).
IRIS_DEVICE uint64_t descriptor(uint32_t leading, uint32_t stride, uint32_t swizzle) {
  return (static_cast<uint64_t>(leading >> 4) << 16) | (static_cast<uint64_t>(stride >> 4) << 32) |
         (static_cast<uint64_t>(swizzle) << 62);
}

// The descriptors of a multiply's two operands and what wgmma's transpose flags say of them; the same
// for every step of k, like StepPlan's offsets.
struct WarpgroupPlan {
  bool a_k_major, b_k_major;
  uint64_t a, b;       // descriptors, start address 0
  int a_step, b_step;  // bytes from a stage's first k16 to its second
};

// k-major: 64-byte swizzle, 8-row groups 512 bytes apart (the leading offset is unused: a row of 64
// bytes is one swizzle's width), the second k16 32 bytes along the rows. mn-major: 128-byte swizzle,
// the 64-column halves 4 KiB apart (leading), 8-row groups of k 1 KiB apart (stride), the second k16
// 16 rows down.
IRIS_DEVICE WarpgroupPlan warpgroup_plan(bool a_k_major, bool b_k_major) {
  const uint64_t k_major = descriptor(16, 512, 2), mn_major = descriptor(4096, 1024, 1);
  return WarpgroupPlan{a_k_major, b_k_major, a_k_major ? k_major : mn_major, b_k_major ? k_major : mn_major,
                       a_k_major ? 32 : 2048, b_k_major ? 32 : 2048};
}

// The 64 registers of one m64n128 accumulator, as asm operands.
#define IRIS_GEMM_WGMMA_D(d)                                                                                           \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),          \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),           \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),          \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),          \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),          \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),          \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),          \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
// wgmma m64n128k16 with float accumulation, d += a b (scale-d 1), `type` the inputs' PTX type; TA and
// TB: A and B are mn-major (wgmma's "transposed").
#define IRIS_GEMM_WGMMA_M64N128K16(type, d, da, db, TA, TB)                                                           \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                            \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." type "." type " "                                       \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "     \
               "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "      \
               "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "      \
               "%59, %60, %61, %62, %63}, %64, %65, p, 1, 1, %66, %67;\n}\n"                                         \
               : IRIS_GEMM_WGMMA_D(d)                                                                                \
               : "l"(da), "l"(db), "n"(TA), "n"(TB))

template <class T, int TA, int TB>
IRIS_DEVICE void wgmma_m64n128k16(float* d, uint64_t da, uint64_t db) {
  if constexpr (::iris::detail::is_same<T, ::iris::bfloat16>::value) {
    IRIS_GEMM_WGMMA_M64N128K16("bf16", d, da, db, TA, TB);
  } else {
    IRIS_GEMM_WGMMA_M64N128K16("f16", d, da, db, TA, TB);
  }
}

// Ties the accumulator's registers to this point: the compiler must not move their reads or writes
// across the asynchronous wgmma, which writes them without the compiler seeing when.
IRIS_DEVICE void fence_accumulator(Accumulator& acc) {
#pragma unroll
  for (int e = 0; e < Accumulator::kElements; ++e) asm volatile("" : "+f"(acc.v[e])::"memory");
}

// Both k16 halves of a stage, issued together and committed as one group.
template <class T, int TA, int TB>
IRIS_DEVICE void wgmma_stage(Accumulator& acc, uint64_t da, uint64_t db, const WarpgroupPlan& p) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  wgmma_m64n128k16<T, TA, TB>(acc.v, da, db);
  wgmma_m64n128k16<T, TA, TB>(acc.v, da + (p.a_step >> 4), db + (p.b_step >> 4));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <class T>
IRIS_DEVICE void compute_step(Accumulator& acc, const uint8_t* a, const uint8_t* b, const WarpgroupPlan& p) {
  // Warpgroup g reads A's rows 64 g ..: 4 KiB into the tile either way (64 rows of 64 bytes k-major,
  // the second 64-column half mn-major). The start address field (bits 0-13) holds any address of the
  // 228 KiB of shared memory, so adding it to the descriptor carries into nothing.
  const int group = thread_index() / 128;
  const uint64_t da = p.a + ((shared_address(a) + group * 4096) >> 4);
  const uint64_t db = p.b + (shared_address(b) >> 4);
  fence_accumulator(acc);
  // One branch around the whole stage: a branch between wgmma makes ptxas serialize them (it warns
  // and waits for each before the next).
  if (p.a_k_major && !p.b_k_major) wgmma_stage<T, 0, 1>(acc, da, db, p);
  else if (p.a_k_major) wgmma_stage<T, 0, 0>(acc, da, db, p);
  else if (!p.b_k_major) wgmma_stage<T, 1, 1>(acc, da, db, p);
  else wgmma_stage<T, 1, 0>(acc, da, db, p);
  // Done before the block's next barrier, after which the stage is refilled.
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_accumulator(acc);
}

#undef IRIS_GEMM_WGMMA_M64N128K16  // IRIS_GEMM_WGMMA_D: gemm_tma.hpp's wgmma too, which undefines it
#endif  // IRIS_GEMM_WGMMA

// The plan of a multiply of T, which picks its compute_step: mma.sync's fragment offsets, or wgmma's
// descriptors.
template <class T>
IRIS_DEVICE auto plan_steps(bool a_k_major, bool b_k_major) {
#if defined(IRIS_GEMM_WGMMA)
  if constexpr (kUsesWgmma<T>) {
    return warpgroup_plan(a_k_major, b_k_major);
  } else {
    return fragment_plan<T>(a_k_major, b_k_major);
  }
#else
  return fragment_plan<T>(a_k_major, b_k_major);
#endif
}

// Where accumulator element e of this thread is in the tile: the m16n8 C fragment (rows g and g + 8,
// columns 2t and 2t + 1) of warp tile (wm, wn)'s mma tile (e / 16, e / 4 % 4); after wgmma, of warp
// w's rows and columns 8 (e / 4).
IRIS_DEVICE void position(const Accumulator& acc, int e, int& i, int& j) {
  const int t = thread_index(), warp = t / 32, lane = t % 32;
#if defined(IRIS_GEMM_WGMMA)
  if (acc.layout == kWarpgroups) {
    i = warp * 16 + lane / 4 + ((e % 4) / 2) * 8;
    j = (e / 4) * 8 + 2 * (lane % 4) + e % 2;
    return;
  }
#else
  (void)acc;
#endif
  const int mi = e / 16, ni = (e / 4) % 4, r = e % 4;
  i = (warp / 4) * 64 + mi * 16 + lane / 4 + (r / 2) * 8;
  j = (warp % 4) * 32 + ni * 8 + 2 * (lane % 4) + r % 2;
}

}  // namespace detail
}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_MMA_HPP
