// The persistent GEMM of Hopper (gemm.hpp, "The whole-kernel GEMM on Hopper"): TMA loads into 128-byte
// swizzled shared memory, an mbarrier pipeline of Cfg::kStages steps of k, one producer warpgroup and two
// consumer warpgroups (setmaxnreg moves the registers to the consumers), wgmma m64n256k16 from shared
// memory, the result staged through shared memory and written by TMA stores, and a persistent grid
// walking the 128 x 256 tiles in grouped order.
//
// Shared memory (dynamic, its start rounded up to 1 KiB, where the 128-byte swizzle repeats):
//   stage s (Cfg::kStageBytes = 48 KiB): A's 128 x 64 tile (16 KiB), then B's 64 x 256 tile (32 KiB)
//   epilogue: per consumer warpgroup Cfg::kEpilogueBuffers buffers of 64 rows x Cfg::kEpilogueColumns
//   barriers: full[s] (the producer's expect_tx, completed by the TMA's bytes), empty[s] (one arrival
//   per consumer warp once its wgmma no longer reads stage s)
//
// An operand tile is made of 128-byte rows, 8-row atoms of 1 KiB, chunk c of row r at c ^ (r % 8): what
// TMA's CU_TENSOR_MAP_SWIZZLE_128B writes and what wgmma's 128-byte swizzle reads.
//   k-major (A row-major, B column-major): rows along m (n) of 64 k elements, one TMA box of 64 x 128 (A)
//     or 64 x 256 (B); descriptor: stride byte offset 1 KiB (8 rows), the next k16 32 bytes along.
//   mn-major (A column-major, B row-major, ctx.ops's B): boxes of 64 (m or n) x 64 (k), 8 KiB each, side
//     by side; descriptor: leading byte offset 8 KiB (the next 64 columns), stride 1 KiB (8 rows of k),
//     the next k16 16 rows (2 KiB) down.
// Consumer warpgroup g multiplies rows 64 g .. 64 g + 63 of the tile: 8 KiB into A's tile either way.
#ifndef IRIS_IMPL_GEMM_TMA_HPP
#define IRIS_IMPL_GEMM_TMA_HPP

namespace iris {
namespace gemm {
namespace tma {

// ops.lua launches the whole-kernel GEMM with the numbers impl/abi.h gives Lua.
static_assert(kThreads == IRIS_GEMM_TMA_THREADS && kTileM == IRIS_GEMM_TMA_TILE_M && kTileN == IRIS_GEMM_TMA_TILE_N &&
                  Config<>::kSharedBytes == IRIS_GEMM_TMA_SHARED_BYTES,
              "impl/abi.h's IRIS_GEMM_TMA_* are gemm::tma's");

IRIS_HOST_DEVICE int64_t tiles(int64_t m, int64_t n) { return ((m + kTileM - 1) / kTileM) * ((n + kTileN - 1) / kTileN); }

// Tile `index` of the grouped order: kGroupM rows of tiles walked column by column, so the CTAs working
// at once share rows of A and columns of B in L2.
IRIS_HOST_DEVICE void tile_origin(int64_t index, int64_t m, int64_t n, int64_t& row, int64_t& col) {
  const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;
  const int64_t in_group = static_cast<int64_t>(kGroupM) * tiles_n;
  const int64_t first_m = (index / in_group) * kGroupM;
  const int64_t group_rows = tiles_m - first_m < kGroupM ? tiles_m - first_m : kGroupM;
  row = (first_m + (index % in_group) % group_rows) * kTileM;
  col = ((index % in_group) / group_rows) * kTileN;
}

#if defined(IRIS_GEMM_WGMMA)
namespace detail {

using ::iris::detail::shared_address;

IRIS_DEVICE void barrier_init(uint64_t* bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
IRIS_DEVICE void arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// The staged block copies' (impl/staged_copy.hpp): the one arrival of a phase announcing the bytes still
// to land, the wait for a phase (a barrier starts in phase 0, incomplete: a wait for parity 1 returns at
// once, which is how the producer's first pass finds every stage empty), and the bulk store groups.
using ::iris::detail::staged::expect_bytes;
using ::iris::detail::staged::wait_phase;
using ::iris::detail::staged::commit_stores;
using ::iris::detail::staged::wait_stores_read;
using ::iris::detail::staged::wait_stores_written;

// A box of `map` at (c0, c1) (innermost coordinate first) into shared memory, counted on `bar`. The box's
// bytes are all written and counted even where it reaches past the matrix (those elements are zeros).
IRIS_DEVICE void load_box(void* to, const TensorMap& map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          shared_address(to)),
      "l"(&map), "r"(c0), "r"(c1), "r"(shared_address(bar))
      : "memory");
}
// A box of shared memory to `map` at (c0, c1); the parts past the matrix are not written.
IRIS_DEVICE void store_box(const TensorMap& map, int c0, int c1, const void* from) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(&map), "r"(c0),
               "r"(c1), "r"(shared_address(from))
               : "memory");
}
IRIS_DEVICE void prefetch_map(const TensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}
IRIS_DEVICE void fence_shared_to_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier of `threads` threads (a warpgroup: 128) other than __syncthreads()'s barrier 0.
IRIS_DEVICE void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
template <int Registers>
IRIS_DEVICE void registers_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
IRIS_DEVICE void registers_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

// A shared-memory matrix descriptor without its start address (bits 0-13, added per stage): leading and
// stride byte offsets in 16-byte units (bits 16-29, 32-45), 128-byte swizzle (1 in bits 62-63).
IRIS_HOST_DEVICE uint64_t descriptor(uint32_t leading, uint32_t stride) {
  return (static_cast<uint64_t>(leading >> 4) << 16) | (static_cast<uint64_t>(stride >> 4) << 32) | (1ull << 62);
}
IRIS_DEVICE uint64_t at(uint64_t descriptor, const void* p) { return descriptor + (shared_address(p) >> 4); }

// The 128 registers of one m64n256 accumulator, as asm operands: gemm_mma.hpp's 64 twice.
#define IRIS_GEMM_TMA_D128(d) IRIS_GEMM_WGMMA_D(d), IRIS_GEMM_WGMMA_D((d + 64))
#define IRIS_GEMM_TMA_REGS128 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, " \
  "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, " \
  "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, " \
  "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, " \
  "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, " \
  "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
// wgmma m64n256k16 with float accumulation: d = a b + (scale_d != 0 ? d : 0), `type` the inputs' PTX
// type; TA, TB: the operand is mn-major (wgmma's "transposed").
#define IRIS_GEMM_TMA_MMA(type)                                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                         \
               "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " {" IRIS_GEMM_TMA_REGS128 "}, "          \
               "%128, %129, p, 1, 1, %131, %132;\n}\n"                                                               \
               : IRIS_GEMM_TMA_D128(d)                                                                               \
               : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB))

template <class T, int TA, int TB>
IRIS_DEVICE void mma(float (&d)[128], uint64_t da, uint64_t db, int scale_d) {
  if constexpr (::iris::detail::is_same<T, ::iris::bfloat16>::value) {
    IRIS_GEMM_TMA_MMA("bf16");
  } else {
    IRIS_GEMM_TMA_MMA("f16");
  }
}
#undef IRIS_GEMM_TMA_MMA
#undef IRIS_GEMM_TMA_REGS128
#undef IRIS_GEMM_TMA_D128
#undef IRIS_GEMM_WGMMA_D

IRIS_DEVICE void mma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
IRIS_DEVICE void mma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
IRIS_DEVICE void mma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Ties the accumulator's registers to this point, so that the compiler moves none of their reads or
// writes across the asynchronous wgmma that writes them.
IRIS_DEVICE void fence_registers(float (&d)[128]) {
#pragma unroll
  for (int e = 0; e < 128; ++e) asm volatile("" : "+f"(d[e])::"memory");
}

template <class T>
IRIS_DEVICE uint32_t pack2(float lo, float hi) {
  uint32_t bits;
  if constexpr (::iris::detail::is_same<T, ::iris::bfloat16>::value) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  }
  return bits;
}

constexpr int kABytes = kTileM * kTileK * 2;  // 16 KiB
constexpr int kBBytes = kTileN * kTileK * 2;  // 32 KiB
constexpr int kBox = 64 * 64 * 2;             // an mn-major box, an 8 KiB 64 x 64 block of C
constexpr int kConsumerWarps = 8;
constexpr int kProducerRegisters = 40;   // the producer warpgroup's after setmaxnreg: one thread issues
constexpr int kConsumerRegisters = 232;  // the consumers': 128 accumulators a thread and the loop
static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= 65536, "the register file holds both");

// The shared memory of a launch, from its (1 KiB-aligned) start.
template <class Cfg>
struct Layout {
  uint8_t* base;
  IRIS_DEVICE uint8_t* stage(int s) const { return base + s * Cfg::kStageBytes; }
  IRIS_DEVICE uint8_t* epilogue(int group, int buffer) const {
    return base + Cfg::kStages * Cfg::kStageBytes + (group * Cfg::kEpilogueBuffers + buffer) * Cfg::kEpilogueBufferBytes;
  }
  IRIS_DEVICE uint64_t* full(int s) const {
    return reinterpret_cast<uint64_t*>(base + Cfg::kStages * Cfg::kStageBytes +
                                       2 * Cfg::kEpilogueBuffers * Cfg::kEpilogueBufferBytes) + s;
  }
  IRIS_DEVICE uint64_t* empty(int s) const { return full(Cfg::kStages) + s; }
};

template <class Cfg>
IRIS_DEVICE Layout<Cfg> layout() {
  extern __shared__ __align__(1024) uint8_t iris_gemm_tma_shared[];
  const uint32_t at = shared_address(iris_gemm_tma_shared);
  return Layout<Cfg>{iris_gemm_tma_shared + (((at + 1023u) & ~1023u) - at)};
}

// The producer: one thread loads every stage of every tile of this CTA, a stage once the consumers
// released it.
template <bool AKMajor, bool BKMajor, class Cfg>
IRIS_DEVICE void produce(const Layout<Cfg>& s, const TensorMap& a, const TensorMap& b, int m, int n, int k, int first,
                         int stride) {
  prefetch_map(a);
  prefetch_map(b);
  const int count = static_cast<int>(tiles(m, n)), steps = (k + kTileK - 1) / kTileK;
  int stage = 0;
  unsigned int phase = 0;
  for (int tile = first; tile < count; tile += stride) {
    int64_t row64, col64;
    tile_origin(tile, m, n, row64, col64);
    const int row = static_cast<int>(row64), col = static_cast<int>(col64);
    for (int step = 0; step < steps; ++step) {
      wait_phase(s.empty(stage), phase ^ 1u);
      uint8_t* to = s.stage(stage);
      uint64_t* full = s.full(stage);
      expect_bytes(full, Cfg::kStageBytes);
      const int k0 = step * kTileK;
      if constexpr (AKMajor) {
        load_box(to, a, k0, row, full);  // 64 k x 128 rows
      } else {
        load_box(to, a, row, k0, full);  // 64 rows x 64 k, twice
        load_box(to + kBox, a, row + 64, k0, full);
      }
      if constexpr (BKMajor) {
        load_box(to + kABytes, b, k0, col, full);  // 64 k x 256 columns
      } else {
#pragma unroll
        for (int j = 0; j < kTileN / 64; ++j) load_box(to + kABytes + j * kBox, b, col + 64 * j, k0, full);
      }
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

// Writes consumer warpgroup `group`'s 64 x 256 share of the tile at (row, col) from its accumulators:
// each pass stages 64 x kEpilogueColumns in one of the group's buffers (128-byte swizzled boxes of 64 x
// 64, which the stores below hit on 32 different banks a warp) and one thread hands the boxes to TMA.
// A buffer is refilled once the store issued from it kEpilogueBuffers passes ago has read it.
template <class T, class Cfg>
IRIS_DEVICE void store_tile(const Layout<Cfg>& s, float (&acc)[128], const TensorMap& c, int row, int col, int group,
                            int thread, int& next_buffer) {
  constexpr int kPasses = kTileN / Cfg::kEpilogueColumns, kBlocks = Cfg::kEpilogueColumns / 8;
  const int warp = thread / 32, lane = thread % 32;
  const int r = 16 * warp + lane / 4;  // and r + 8: the rows of this thread's accumulators
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    uint8_t* buffer = s.epilogue(group, next_buffer);
    if (thread == 0) wait_stores_read<Cfg::kEpilogueBuffers - 1>();
    named_barrier(1 + group, 128);
#pragma unroll
    for (int jj = 0; jj < kBlocks; ++jj) {
      const int j = pass * kBlocks + jj;  // the 8 columns of accumulators 4 j .. 4 j + 3
      uint8_t* box = buffer + (jj / 8) * kBox + 4 * (lane % 4);
      const int chunk = jj % 8;
      *reinterpret_cast<uint32_t*>(box + r * 128 + ((chunk ^ (r & 7)) << 4)) = pack2<T>(acc[4 * j], acc[4 * j + 1]);
      *reinterpret_cast<uint32_t*>(box + (r + 8) * 128 + ((chunk ^ (r & 7)) << 4)) =
          pack2<T>(acc[4 * j + 2], acc[4 * j + 3]);
    }
    fence_shared_to_async();  // the plain stores above, before TMA reads them
    named_barrier(1 + group, 128);
    if (thread == 0) {
#pragma unroll
      for (int b = 0; b < Cfg::kEpilogueColumns / 64; ++b) {
        store_box(c, col + pass * Cfg::kEpilogueColumns + 64 * b, row + 64 * group, buffer + b * kBox);
      }
      commit_stores();
    }
    next_buffer = next_buffer + 1 == Cfg::kEpilogueBuffers ? 0 : next_buffer + 1;
  }
}

// A consumer warpgroup: rows 64 group .. of each tile, stage by stage, one wgmma group in flight while
// it waits for the next stage; a stage goes back to the producer once the wgmma that read it is done.
template <class T, bool AKMajor, bool BKMajor, class Cfg>
IRIS_DEVICE void consume(const Layout<Cfg>& s, const TensorMap& c, int m, int n, int k, int first, int stride,
                         int group, int thread) {
  constexpr int kAStep = AKMajor ? 32 : 2048, kBStep = BKMajor ? 32 : 2048;  // bytes from one k16 to the next
  const uint64_t da0 = descriptor(AKMajor ? 16 : kBox, 1024), db0 = descriptor(BKMajor ? 16 : kBox, 1024);
  const int count = static_cast<int>(tiles(m, n)), steps = (k + kTileK - 1) / kTileK;
  const int lane = thread % 32;
  float acc[128];
  int stage = 0, previous = 0, next_buffer = 0;
  unsigned int phase = 0;
  for (int tile = first; tile < count; tile += stride) {
    int64_t row, col;
    tile_origin(tile, m, n, row, col);
    if (steps == 0) {
#pragma unroll
      for (int e = 0; e < 128; ++e) acc[e] = 0.0f;
    }
    for (int step = 0; step < steps; ++step) {
      wait_phase(s.full(stage), phase);
      const uint8_t* from = s.stage(stage);
      const uint64_t da = at(da0, from + group * kBox), db = at(db0, from + kABytes);
      fence_registers(acc);
      mma_fence();
#pragma unroll
      for (int kk = 0; kk < kTileK / 16; ++kk) {
        mma<T, AKMajor ? 0 : 1, BKMajor ? 0 : 1>(acc, da + kk * (kAStep >> 4), db + kk * (kBStep >> 4), step | kk);
      }
      mma_commit();
      mma_wait<1>();  // the previous step's group is done: its stage can be refilled
      if (step > 0 && lane == 0) arrive(s.empty(previous));
      previous = stage;
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    mma_wait<0>();
    fence_registers(acc);
    if (steps > 0 && lane == 0) arrive(s.empty(previous));
    store_tile<T, Cfg>(s, acc, c, static_cast<int>(row), static_cast<int>(col), group, thread, next_buffer);
  }
  if (thread == 0) wait_stores_written();  // the buffers stay until the last store has read them
}

}  // namespace detail
#endif  // IRIS_GEMM_WGMMA

template <class T, bool AKMajor, bool BKMajor, class Cfg>
IRIS_DEVICE void run(const TensorMap& a, const TensorMap& b, const TensorMap& c, int64_t m, int64_t n, int64_t k,
                     int64_t first_tile, int64_t tile_stride) {
#if defined(IRIS_GEMM_WGMMA)
  using namespace detail;
  static_assert(sizeof(T) == 2, "gemm::tma multiplies float16 and bfloat16");
  if (::iris::detail::block_thread_count() != static_cast<unsigned int>(kThreads)) {
    ::iris::detail::fail("iris::gemm::tma::run needs blocks of exactly 384 threads (gemm::tma::kThreads)");
  }
  const Layout<Cfg> s = layout<Cfg>();
  const int t = static_cast<int>(::iris::detail::block_thread_index()), group = t / 128;
  if (t == 0) {
    for (int i = 0; i < Cfg::kStages; ++i) {
      barrier_init(s.full(i), 1);
      barrier_init(s.empty(i), kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int first = static_cast<int>(first_tile), stride = static_cast<int>(tile_stride);
  // One branch per role, each starting with its setmaxnreg (ptxas honours it only so).
  if (group == 0) {
    registers_down<kProducerRegisters>();
    if (t == 0) produce<AKMajor, BKMajor, Cfg>(s, a, b, mi, ni, ki, first, stride);
  } else {
    registers_up<kConsumerRegisters>();
    consume<T, AKMajor, BKMajor, Cfg>(s, c, mi, ni, ki, first, stride, group - 1, t - 128 * group);
  }
#else
  (void)a, (void)b, (void)c, (void)m, (void)n, (void)k, (void)first_tile, (void)tile_stride;
  ::iris::detail::fail("iris::gemm::tma::run needs a kernel compiled for sm_90a (an H100 or H200): TMA and wgmma");
#endif
}

}  // namespace tma
}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_TMA_HPP
