// Matrix multiplication in kernels: a block computes one output tile of C = A B, with float
// accumulation, on the matrix units where the platform has them, for kernels that communicate the
// tiles they compute (ctx.ops and Iris's examples 07-16 are built from it). Declarations and contracts
// here; bodies in impl/gemm_*.hpp.
//
// ---- The tile ------------------------------------------------------------------------------------
// A block of kThreads (256) threads computes a kTileM x kTileN (128 x 128) tile: acc += A[rows of the
// tile, all k] B[all k, columns of the tile]. Inputs are float16, bfloat16 or float32 (all three
// matrices of one call have one element type); the accumulator is float32. Rows and columns past the
// matrices and the last partial step of k are masked (read as zeros), so any M, N and K work.
//
//   NVIDIA (sm_80+)  8 warps of 64 x 32; mma.sync m16n8k16 (f16, bf16) or m16n8k8 on tf32 (float32
//                    inputs are rounded to tf32, 10 bits of mantissa, as cuBLAS's TF32 mode does);
//                    operands staged in shared memory by cp.async (three steps of k in flight;
//                    each thread's chunks and fragment addresses are worked out once per multiply,
//                    so a step of k inside the matrices is two copies per operand and no checks),
//                    fragments read with ldmatrix
//   NVIDIA sm_90a    f16 and bf16: 2 warpgroups of 64 x 128; wgmma m64n128k16 reading both operands
//                    from the same staged tiles through shared-memory descriptors (no fragments in
//                    registers); float32 as on sm_80+. Kernels compiled for sm_90a (what iris-lua
//                    compiles for on an H100 or H200) take it; plain sm_90 keeps mma.sync
//   AMD (gfx90a+)    4 wavefronts of 64 x 64; MFMA 32x32x8 (f16, bf16_1k) or 32x32x2 (f32)
//   cpu backend      NVIDIA's sm_80+ algorithm, its instructions emulated with the warp operations (so
//                    the fragment layouts a GPU uses are the ones the tests check; wgmma is checked on
//                    a GPU only)
//
// Operands are read through Matrix views with any strides. Staging moves 16 bytes at a time when the
// contiguous dimension has stride 1 and the tile's rows start on 16-byte boundaries (the operand's and
// the tile's origin both count); otherwise element by element (correct, slower). A matrix "stored transposed" is a view with swapped strides:
// matrix(b, K, N, 1, K) is B held as N rows of K.
//
// ---- Using it ------------------------------------------------------------------------------------
// Every thread of the block calls each function with the same arguments (they synchronize the block
// and use kSharedBytes of static shared memory, the same buffer for all of them). Declare the kernel
// IRIS_GEMM_KERNEL: on NVIDIA it asks for two blocks per SM (at most 128 registers a thread), which
// hides the latency of one block's barriers and fragment loads behind the other's matrix instructions
// (docs/perf.md, "The GEMM tile", has the gain on an H200). A kernel whose other
// work needs more registers than that (ctx.ops's matmul_all_reduce, with five all-reduces) spills under
// it, and one whose blocks compete for memory may gain nothing: measure before declaring one so. On
// sm_90a, multiply 16-bit inputs in the kernel's own function: ptxas serializes wgmma inside a function
// the kernel calls (__noinline__), which costs the tile much of its speed (docs/perf.md, "The GEMM tile on
// wgmma, built in"). The accumulator is
// each thread's share of the tile, in registers: element (i, j) of the tile is at an index that
// depends on the platform and, on sm_90a, on the input type (Accumulator::layout), so reach it through
// for_each() or the stores below.
//
//   __global__ void IRIS_GEMM_KERNEL gemm(const iris::half* a, const iris::half* b, iris::half* c,
//                                         int64_t m, int64_t n, int64_t k) {  // launch {grid = G, block = 256}
//     using namespace iris;
//     const gemm::Matrix<half> A = gemm::matrix(a, m, k, k), B = gemm::matrix(b, k, n, n);
//     for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
//       const ccl::Tile tile = gemm::tile(t, m, n);
//       gemm::Accumulator acc;
//       gemm::clear(acc);
//       gemm::multiply(acc, A, B, tile.row, tile.col);
//       gemm::store(acc, ccl::view(c, m, n, n), tile);
//     }
//   }
//
// The tile then goes wherever the kernel wants it, as it is computed: store() into a view of another
// rank's heap (ctx.translate) puts it there; atomic_add() accumulates it into any rank's copy; stored
// locally, it is the source of the tile-level collectives of ccl.hpp (whose tiles hold at most 8
// elements per thread on GPUs: hand them the kTileM x kTileN tile in sub-tiles, as kernels/ops do).
#ifndef IRIS_GEMM_HPP
#define IRIS_GEMM_HPP

// The launch bounds of a kernel that multiplies (see "Using it"). AMD's second bound means something
// else (waves per execution unit) and its 64-lane wavefronts hold the tile in fewer registers: there,
// and on the cpu backend, it only states the block size.
#if defined(IRIS_PLATFORM_CUDA)
#define IRIS_GEMM_KERNEL __launch_bounds__(256, 2)
#else
#define IRIS_GEMM_KERNEL __launch_bounds__(256)
#endif

namespace iris {
namespace gemm {

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kThreads = 256;
constexpr int kSharedBytes = 48 * 1024;  // static shared memory of a block that multiplies

// rows x cols elements; element (i, j) at ptr[i * row_stride + j * col_stride].
template <class T>
struct Matrix {
  const T* ptr;
  int64_t rows, cols, row_stride, col_stride;

  // Columns [first, first + count) (for A) and rows [first, first + count) (for B): the k range of one
  // step of a split or gathered multiplication.
  IRIS_DEVICE Matrix<T> columns(int64_t first, int64_t count) const {
    return Matrix<T>{ptr + first * col_stride, rows, count, row_stride, col_stride};
  }
  IRIS_DEVICE Matrix<T> row_range(int64_t first, int64_t count) const {
    return Matrix<T>{ptr + first * row_stride, count, cols, row_stride, col_stride};
  }
};

template <class T>
IRIS_DEVICE Matrix<T> matrix(const T* ptr, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride = 1) {
  return Matrix<T>{ptr, rows, cols, row_stride, col_stride};
}

// A thread's share of the block's kTileM x kTileN float tile. Which element of the tile v[e] is depends
// on the instruction that computed it, and on sm_90a a kernel has two (wgmma for 16-bit inputs,
// mma.sync for float32): `layout` records it (clear() and multiply() set it, the same in every thread),
// and for_each and the stores follow it. One accumulator takes one input type between clear()s.
struct Accumulator {
  static constexpr int kElements = kTileM * kTileN / kThreads;
  float v[kElements];
  int layout;
};

IRIS_DEVICE void clear(Accumulator& acc);

// acc += A[row .. row + kTileM) x B[.., col .. col + kTileN), summed over k in [0, a.cols); a.cols must
// equal b.rows (a kernel splitting k calls it once per part, with columns() and row_range()). Rows of A
// past a.rows and columns of B past b.cols contribute zeros.
template <class T>
IRIS_DEVICE void multiply(Accumulator& acc, const Matrix<T>& a, const Matrix<T>& b, int64_t row, int64_t col);

// Calls f(i, j, value) for each element this thread holds, (i, j) its place in the tile (0-based; the
// whole kTileM x kTileN, masking is the caller's).
template <class F>
IRIS_DEVICE void for_each(const Accumulator& acc, F f);

// dst(tile.row + i, tile.col + j) = U(acc(i, j)) for i < tile.rows, j < tile.cols: the accumulator's
// (0, 0) lands on the tile's first element, so one accumulator can be stored at several places (a local
// tile and its place in a gathered result). dst may be in any rank's heap (a translated pointer); rows
// move as 16-byte stores where dst allows. Every thread of the block sees the whole tile written when
// store() returns; other ranks see these plain stores once a signal (after __syncthreads()) publishes
// them.
template <class U>
IRIS_DEVICE void store(const Accumulator& acc, const ccl::View<U>& dst, const ccl::Tile& tile);

// The same into `to_rank`'s copy of dst (dst in this rank's address space): Iris's put of a tile.
template <class U>
IRIS_DEVICE void put(const Accumulator& acc, const Context& ctx, const ccl::View<U>& dst, const ccl::Tile& tile,
                     int to_rank);

// dst(tile.row + i, tile.col + j) += acc(i, j), one atomic per element (relaxed, system scope: order
// them with a release after __syncthreads()) in whatever heap dst points into. U is float (native
// atomic add) or a 16-bit float (a compare-and-swap loop where the platform has no 16-bit add).
template <class U>
IRIS_DEVICE void atomic_add(const Accumulator& acc, const ccl::View<U>& dst, const ccl::Tile& tile);

// ---- Which tile ------------------------------------------------------------------------------------
// tiles(m, n): the kTileM x kTileN tiles of an m x n result. tile(index, m, n): tile number `index` in
// grouped order: `group_m` rows of tiles are walked column by column, so blocks working at the same time
// share rows of A and columns of B in the cache. The Tile (ccl.hpp) has the row-major index, first row
// and column, and the extent cut at the edges.
IRIS_DEVICE int64_t tiles(int64_t m, int64_t n);
IRIS_DEVICE ccl::Tile tile(int64_t index, int64_t m, int64_t n, int group_m = 8);

// ---- The arena between multiplies -----------------------------------------------------------------
// The block's kSharedBytes of shared memory, lent as the staging buffer of a staged block copy
// (iris.hpp's put_block(..., Staging)) between multiplies: a tile just stored goes to the peers through
// it, or a block that only communicates stages through the arena it does not multiply with. multiply()
// and store() start with __syncthreads(), and a staged copy is done with its buffer when it returns.
IRIS_DEVICE Staging staging();

// ---- The whole-kernel GEMM on Hopper (sm_90a) --------------------------------------------------------
// The tile above is a block's building block on every platform. On an H100 or H200 a kernel that only
// multiplies (or multiplies, then hands finished tiles to other blocks) goes faster as a whole kernel
// built for the chip: tma::run is the body of such a kernel. A block of tma::kThreads (384) threads,
// with tma::Config<>::kSharedBytes of dynamic shared memory, one block per SM, computes 128 x 256 tiles
// of C = A B (float16 or bfloat16 in and out, float accumulation): warpgroup 0 loads steps of 64 k of A
// and B with TMA (cp.async.bulk.tensor) into a ring of Config::kStages stages of shared memory,
// warpgroups 1 and 2 each multiply 64 rows of the tile with wgmma m64n256k16 and write them through
// shared memory with TMA stores. Blocks take tiles first_tile, first_tile + tile_stride, ... in
// grouped order (tma::tile_origin). The kernel is declared IRIS_GEMM_TMA_KERNEL (one block per SM, so
// that setmaxnreg can give the multiplying warpgroups 232 registers a thread).
//
// The operands come as tensor maps (TMA's descriptors of a matrix in global memory) that the host
// encodes and passes by value, as `const __grid_constant__ iris::gemm::TensorMap` kernel parameters
// (the TMA unit reads them from the parameter space; a copy in local memory would not do). Each
// describes a row-major matrix of 16-bit elements (rows 16-byte aligned), 128-byte swizzle, box:
//   A, k-major (m x k, AKMajor):  box 64 (k) x 128 (rows);  mn-major (k x m): 64 (m) x 64 (k)
//   B, mn-major (k x n, the default): 64 (n) x 64 (k);      k-major (n x k, BKMajor): 64 (k) x 256 (n)
//   C (m x n): 64 x 64
// Elements past the matrices read as zeros and are not written, so any m, n and k work. Elsewhere than
// sm_90a, run() fails with a message (the platform's kernels use the tile above).
using TensorMap = abi::TensorMapData;  // CUtensorMap's 128 bytes (impl/abi.h: Lua fills the same struct)
static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64, "a CUtensorMap");

namespace tma {

constexpr int kThreads = 384;  // a producer warpgroup and two consumer warpgroups
constexpr int kTileM = 128;
constexpr int kTileN = 256;
constexpr int kTileK = 64;   // one stage: 64 elements of k (128 bytes, the swizzle's width)
constexpr int kGroupM = 8;   // tile_origin's groups of tile rows

// Stages of k in flight, and the epilogue's staging: per consumer warpgroup `EpilogueBuffers` buffers
// of 64 rows x `EpilogueColumns` (64, 128 or 256).
template <int Stages = 4, int EpilogueColumns = 64, int EpilogueBuffers = 2>
struct Config {
  static constexpr int kStages = Stages;
  static constexpr int kEpilogueColumns = EpilogueColumns;
  static constexpr int kEpilogueBuffers = EpilogueBuffers;
  static constexpr int kStageBytes = (kTileM + kTileN) * kTileK * 2;
  static constexpr int kEpilogueBufferBytes = 64 * EpilogueColumns * 2;
  // The stages, the epilogue buffers, two mbarriers per stage, and 1 KiB to align the start to.
  static constexpr int kSharedBytes =
      1024 + Stages * kStageBytes + 2 * EpilogueBuffers * kEpilogueBufferBytes + 16 * Stages;
  static_assert(EpilogueColumns == 64 || EpilogueColumns == 128 || EpilogueColumns == 256, "whole boxes of C");
  static_assert(kSharedBytes <= 227 * 1024, "an H100's or H200's shared memory per block");
};

IRIS_HOST_DEVICE int64_t tiles(int64_t m, int64_t n);
// Where tile `index` starts (grouped order).
IRIS_HOST_DEVICE void tile_origin(int64_t index, int64_t m, int64_t n, int64_t& row, int64_t& col);

template <class T, bool AKMajor = true, bool BKMajor = false, class Cfg = Config<>>
IRIS_DEVICE void run(const TensorMap& a, const TensorMap& b, const TensorMap& c, int64_t m, int64_t n, int64_t k,
                     int64_t first_tile, int64_t tile_stride);

}  // namespace tma

}  // namespace gemm
}  // namespace iris

#define IRIS_GEMM_TMA_KERNEL __launch_bounds__(384, 1)

#include "impl/gemm_layout.hpp"
#if defined(IRIS_PLATFORM_HIP)
#include "impl/gemm_mfma.hpp"
#else
#include "impl/gemm_mma.hpp"  // NVIDIA's instructions, emulated on the cpu backend
#endif
#include "impl/gemm_tile.hpp"
#include "impl/gemm_tma.hpp"

#endif  // IRIS_GEMM_HPP
