// What the fused ops (ctx.ops, kernels/ops/*.hip; docs/ops.md) share: they are calls of the ctx.ccl
// protocol (impl/ccl_call.hpp: arrival with a descriptor, mismatches reported on every rank, progress,
// deliveries), with an M x N x K descriptor, GEMM tiles handed to the tile-level collectives in
// sub-tiles, and flags for the hand-offs between a rank's own blocks. Included by kernels/ops/*.hip.
#ifndef IRIS_IMPL_OPS_CALL_HPP
#define IRIS_IMPL_OPS_CALL_HPP

#include <iris/impl/ccl_call.hpp>

namespace iris {
namespace ops {

using ccl::detail::Call;
using ccl::detail::CallSync;
using ccl::detail::Shared;

// Sub-tiles the tile-level collectives take: a block holds one in registers (8 elements per thread on
// GPUs: 32 x 64 is 2048 elements for 256 threads).
constexpr int kSubM = 32;
constexpr int kSubN = 64;

// The call of an op: a ctx.ccl call over every rank whose descriptor says M x N x K (rows, cols, count)
// and whose layout hash covers the tensors the peers reach (a, b).
IRIS_DEVICE Call make_call(const Context& ctx, const char* name, int op, int variant, int dtype,
                           int64_t m, int64_t n, int64_t k, int dim, Shared a, Shared b) {
  const uint64_t everyone = ctx.world_size >= 64 ? ~0ull : (1ull << ctx.world_size) - 1ull;
  Call call = ccl::detail::make_call(ctx, name, op, everyone, variant, dtype, 0, 0, static_cast<uint64_t>(k),
                                     static_cast<uint64_t>(m), dim, gemm::kTileM, gemm::kTileN, a, b);
  call.mine.cols = static_cast<uint64_t>(n);
  return call;
}

// The sub-tiles of a GEMM tile of an m x n view, in one order on every rank: f(sub-tile) for each
// kSubM x kSubN tile of the view (its index among the view's sub-tiles) inside `tile`.
template <class F>
IRIS_DEVICE void for_each_subtile(const ccl::Tile& tile, int64_t m, int64_t n, F f) {
  for (int64_t r = tile.row; r < tile.row + tile.rows; r += kSubM) {
    for (int64_t c = tile.col; c < tile.col + tile.cols; c += kSubN) {
      f(ccl::tile((r / kSubM) * ((n + kSubN - 1) / kSubN) + c / kSubN, m, n, kSubM, kSubN));
    }
  }
}

// Hand-offs between a rank's own blocks (a tile computed, a shard copied): one uint64 flag each in a
// workspace tensor, set to the call's number, so flags only grow and are never reset. The waiting
// blocks have higher indices than the blocks they wait for (the cpu backend starts a launch's blocks
// in index order, a few at a time).
IRIS_DEVICE void mark_done(uint64_t* flag, uint64_t seq) {
  __syncthreads();  // the block's writes come before the release
  if (ccl::detail::thread_index() == 0) ::iris::detail::atomic_store(flag, seq, release, sys);
}
IRIS_DEVICE void wait_done(const uint64_t* flag, uint64_t seq, const char* name) {
  if (ccl::detail::thread_index() == 0) ::iris::detail::wait_for(flag, Cmp::ge, seq, acquire, sys, name);
  __syncthreads();
}

// out(tile) = the tile of A B at (row, col), where it is called.
template <class T>
IRIS_DEVICE void tile_product_here(const gemm::Matrix<T>& a, const gemm::Matrix<T>& b, int64_t row, int64_t col,
                                   const ccl::View<T>& out, const ccl::Tile& tile) {
  gemm::Accumulator acc;
  gemm::clear(acc);
  gemm::multiply(acc, a, b, row, col);
  gemm::store(acc, out, tile);
}

// The same in a function of its own whose operands come by value. Its registers are then allocated
// apart from the communication code of the kernel around it: inline, the k loop shared
// IRIS_GEMM_KERNEL's 128 registers with that code and spilled (matmul_all_gather ran much slower than
// the GEMM alone: docs/perf.md, "GPU figures: the fused ops on one H200"). By value, not through a lambda's references, so that the
// compiler need not reload them after every asm statement that clobbers memory.
template <class T>
__device__ __noinline__ void tile_product_apart(gemm::Matrix<T> a, gemm::Matrix<T> b, int64_t row, int64_t col,
                                                ccl::View<T> out, ccl::Tile tile) {
  tile_product_here(a, b, row, col, out, tile);
}

// The same, inline where the tile multiplies on wgmma (16-bit inputs on sm_90a): ptxas serializes wgmma
// in a called function (docs/perf.md, "The fused ops with wgmma"), and wgmma keeps
// no fragments in registers, so the kernel around it has room. Inline means in the kernel's own function:
// the ops' kernels come one per element type and inline their tile loops (below).
template <class T>
IRIS_DEVICE void tile_product(const gemm::Matrix<T>& a, const gemm::Matrix<T>& b, int64_t row, int64_t col,
                              const ccl::View<T>& out, const ccl::Tile& tile) {
#if defined(IRIS_GEMM_WGMMA)
  if constexpr (sizeof(T) == 2) {
    tile_product_here(a, b, row, col, out, tile);
    return;
  }
#endif
  tile_product_apart(a, b, row, col, out, tile);
}

// rows x cols elements from src (rows `src_stride` apart) to dst (`dst_stride` apart), either in any rank's
// heap: whole 16-byte chunks spread over the block's threads, InFlight in flight each, where both allow.
template <class T, int InFlight = 4>
IRIS_DEVICE void copy_rows(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  constexpr int V = static_cast<int>(16 / sizeof(T));
  const int t = ccl::detail::thread_index(), threads = ccl::detail::thread_count();
  const bool vector = cols % V == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(dst) % 16 == 0 && (src_stride * sizeof(T)) % 16 == 0 &&
                      (dst_stride * sizeof(T)) % 16 == 0;
  if (!vector) {
    for (int64_t e = t; e < rows * cols; e += threads) dst[(e / cols) * dst_stride + e % cols] = src[(e / cols) * src_stride + e % cols];
    return;
  }
  const int64_t per_row = cols / V;
  ::iris::detail::copy_chunks16_at<InFlight>(
      rows * per_row, t, threads,
      [=](int64_t c) { return reinterpret_cast<const uint4*>(src + (c / per_row) * src_stride + (c % per_row) * V); },
      [=](int64_t c) { return reinterpret_cast<uint4*>(dst + (c / per_row) * dst_stride + (c % per_row) * V); });
}

// Rows shorter than this go by the threads: the bulk unit costs about the same per copy whatever its
// size up to a few KiB, so a GEMM tile's short rows are far slower staged than by the threads' copy_rows;
// from about 2 KiB a row the unit moves more per SM than the threads do (docs/perf.md, "Copies from a few
// SMs", has the figures).
constexpr int64_t kBulkRowBytes = 2048;

// rows x cols elements of src to each of `dests` destinations (dest(d): where row 0 goes, rows
// `dst_stride` apart): rows of kBulkRowBytes or more staged through `staging` by the bulk-copy unit
// where it can (sm_90+, rows on 16-byte boundaries: impl/staged_copy.hpp), read once for every
// destination, so a few communication blocks keep the links busy; else copy_rows per destination.
// Synchronizes the block. With `completion` read the writes may still be in flight when it returns:
// finish_sends() before the block reports them (mark_done, the call's end()).
template <class T, class Dest>
IRIS_DEVICE void send_rows(const T* src, int64_t src_stride, const Dest& dest, int dests, int64_t dst_stride,
                           int64_t rows, int64_t cols, const Staging& staging,
                           ::iris::detail::staged::Completion completion) {
  const auto bytes_of = [&](int d) { return reinterpret_cast<uint8_t*>(dest(d)); };
  const int64_t size = static_cast<int64_t>(sizeof(T));
  if (cols * size >= kBulkRowBytes &&
      ::iris::detail::staged::copy_rows_bulk(reinterpret_cast<const uint8_t*>(src), src_stride * size, bytes_of, dests,
                                             dst_stride * size, rows, cols * size, staging, completion)) {
    return;
  }
  for (int d = 0; d < dests; ++d) copy_rows(src, src_stride, dest(d), dst_stride, rows, cols);
  __syncthreads();
}
using ::iris::detail::staged::Completion;
IRIS_DEVICE void finish_sends() { ::iris::detail::staged::await_writes(); }

// The kernels of ctx.ops come one per element type, <kernel>_float16, _bfloat16 and _float32 (ops.lua
// launches the operands'), each with its tile loop inline (forceinline down from the __global__
// function): on sm_90a a 16-bit multiply runs on wgmma, which ptxas serializes in a called function, and
// the three types inline in one kernel spilled. Written out, not made by a macro: iris-lua reads the
// kernels' signatures from the source.
template <class T> struct DtypeCode;
template <> struct DtypeCode<::iris::half> { static constexpr int value = IRIS_DTYPE_float16; };
template <> struct DtypeCode<::iris::bfloat16> { static constexpr int value = IRIS_DTYPE_bfloat16; };
template <> struct DtypeCode<float> { static constexpr int value = IRIS_DTYPE_float32; };

// The variant codes (IRIS_VARIANT_CODES): ctx.ccl's and the ops' own are one list.
namespace variant = ::iris::ccl::detail::variant;
// ops.lua tiles the output and sizes the blocks as iris::gemm does.
static_assert(gemm::kTileM == IRIS_GEMM_TILE && gemm::kTileN == IRIS_GEMM_TILE, "ops.lua reads IRIS_GEMM_TILE");
static_assert(gemm::kThreads == IRIS_GEMM_THREADS, "ops.lua reads IRIS_GEMM_THREADS");

}  // namespace ops
}  // namespace iris

#endif  // IRIS_IMPL_OPS_CALL_HPP
