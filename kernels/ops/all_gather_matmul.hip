// ctx.ops.all_gather_matmul (src/lua/iris/ops.lua; docs/ops.md): out = [a_0 a_1 ... a_(W-1)] b, each
// rank holding a k_local-column shard a_r of A and all of b (W k_local rows). Each output tile starts
// with this rank's own shard (no waiting), then takes the peers' in rotated order:
//   pull:   the GEMM reads each peer's shard straight from its heap (Iris's example 14, pull model)
//   staged: blocks [0, copy_blocks) copy the peers' shards, 128 rows at a time, into a local buffer
//           (rows of 2 KiB or more through their GEMM arena by the bulk-copy unit on sm_90+:
//           ops::send_rows) and flag each piece; the GEMM blocks after them multiply each piece once it is there, so
//           every remote byte crosses the link once instead of once per column of tiles
// Peers' shards are ready once they arrived (the call protocol); the call ends when every member has
// delivered, so no peer still reads this rank's shard afterwards.
#include <iris/impl/ops_call.hpp>

namespace {

using namespace iris;

template <class T>
__device__ __forceinline__ void run(const ops::Call& call, const T* a, const T* b, T* out, T* gathered, uint64_t* flags,
                                 long m, long n, long k_local, long a_stride, long b_stride, long out_stride,
                                 int variant, int copy_blocks) {
  const ccl::Team& team = call.team;
  const int64_t tiles_m = (m + gemm::kTileM - 1) / gemm::kTileM;
  const int64_t g_stride = k_local * team.size;
  const bool staged = variant == ops::variant::staged;
  if (staged && static_cast<int>(blockIdx.x) < copy_blocks) {
    // Piece i: rows 128 (i / (W - 1)) of the (i % (W - 1) + 1)-th peer after this rank.
    for (int64_t i = blockIdx.x; i < tiles_m * (team.size - 1); i += copy_blocks) {
      const int64_t rb = i / (team.size - 1);
      const int q = ccl::detail::rotated(team, static_cast<int>(i % (team.size - 1)) + 1);
      const int64_t row = rb * gemm::kTileM, rows = m - row < gemm::kTileM ? m - row : gemm::kTileM;
      const T* from = team.ctx.translate(a, q) + row * a_stride;
      T* to = gathered + row * g_stride + q * k_local;
      ops::send_rows(from, a_stride, [to](int) { return to; }, 1, g_stride, rows, k_local, gemm::staging(),
                     ops::Completion::written);  // the GEMM blocks read it once flagged
      ops::mark_done(flags + q * tiles_m + rb, call.seq);
    }
    return;
  }
  const int gemm_block = static_cast<int>(blockIdx.x) - (staged ? copy_blocks : 0);
  const int gemm_blocks = static_cast<int>(gridDim.x) - (staged ? copy_blocks : 0);
  const gemm::Matrix<T> B = gemm::matrix(b, k_local * team.size, n, b_stride);
  const ccl::View<T> result = ccl::view(out, m, n, out_stride);
  for (int64_t t = gemm_block; t < gemm::tiles(m, n); t += gemm_blocks) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    gemm::Accumulator acc;
    gemm::clear(acc);
    for (int i = 0; i < team.size; ++i) {
      const int q = ccl::detail::rotated(team, i);
      gemm::Matrix<T> shard = gemm::matrix(team.ctx.translate(a, q), m, k_local, a_stride);
      if (staged && q != team.rank()) {
        ops::wait_done(flags + q * tiles_m + tile.row / gemm::kTileM, call.seq, "ctx.ops.all_gather_matmul");
        shard = gemm::matrix<T>(gathered + q * k_local, m, k_local, g_stride);
      }
      gemm::multiply(acc, shard, B.row_range(q * k_local, k_local), tile.row, tile.col);
    }
    gemm::store(acc, result, tile);
  }
}

// The call around run<T>, for the kernels of each element type below (ops_call.hpp says why there are three).
template <class T>
__device__ __forceinline__ void entry(const void* a, const void* b, void* out, void* gathered, uint64_t* flags, long m,
                                      long n, long k_local, long a_stride, long b_stride, long out_stride, int variant,
                                      int copy_blocks, iris::Context ctx) {
  const ops::Call call = ops::make_call(ctx, "ctx.ops.all_gather_matmul", ccl::detail::all_gather_matmul_call,
                                        variant, ops::DtypeCode<T>::value, m, n, k_local, 1, {a, a_stride}, {nullptr, 0});
  call.begin();
  run<T>(call, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), static_cast<T*>(gathered), flags,
         m, n, k_local, a_stride, b_stride, out_stride, variant, copy_blocks);
  call.end(true);
}

}  // namespace

__global__ void IRIS_GEMM_KERNEL ops_all_gather_matmul_float16(const void* a, const void* b, void* out, void* gathered,
    uint64_t* flags, long m, long n, long k_local, long a_stride, long b_stride, long out_stride, int variant,
    int copy_blocks, iris::Context ctx) {
  entry<iris::half>(a, b, out, gathered, flags, m, n, k_local, a_stride, b_stride, out_stride, variant, copy_blocks, ctx);
}
__global__ void IRIS_GEMM_KERNEL ops_all_gather_matmul_bfloat16(const void* a, const void* b, void* out, void* gathered,
    uint64_t* flags, long m, long n, long k_local, long a_stride, long b_stride, long out_stride, int variant,
    int copy_blocks, iris::Context ctx) {
  entry<iris::bfloat16>(a, b, out, gathered, flags, m, n, k_local, a_stride, b_stride, out_stride, variant, copy_blocks, ctx);
}
__global__ void IRIS_GEMM_KERNEL ops_all_gather_matmul_float32(const void* a, const void* b, void* out, void* gathered,
    uint64_t* flags, long m, long n, long k_local, long a_stride, long b_stride, long out_stride, int variant,
    int copy_blocks, iris::Context ctx) {
  entry<float>(a, b, out, gathered, flags, m, n, k_local, a_stride, b_stride, out_stride, variant, copy_blocks, ctx);
}
