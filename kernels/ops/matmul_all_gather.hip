// ctx.ops.matmul_all_gather (src/lua/iris/ops.lua; docs/ops.md): every member's a_r b lands in chunk r
// (along dim) of every member's out. Each rank multiplies its own m x n product tile by tile:
//   push:        the block that computed a tile stores it into this rank's chunk, then copies it (from
//                the cache) into its chunk of every peer's out (Iris's all-scatter, example 07)
//   specialized: blocks [0, gemm_blocks) compute and store tiles into this rank's chunk and flag them;
//                the blocks after them (Iris's comm_sms, example 10) copy each flagged tile to the peers,
//                so the GEMM blocks never wait on the links
// The peers' outputs are free once they arrived (the call protocol); they are complete at the call's
// end, when every member delivered.
#include <iris/impl/ops_call.hpp>

namespace {

using namespace iris;

// Copies this rank's finished `tile` of `mine` into the same place of every peer's copy (ops::send_rows:
// a tile's rows, 128 elements, are short enough that the threads copy them; wider rows would go through
// the GEMM arena by the bulk-copy unit). The block calls ops::finish_sends() before it is done.
template <class T>
__device__ __noinline__ void send_to_peers(const ccl::Team& team, const ccl::View<T>& mine, const ccl::Tile& tile) {
  const T* from = mine.ptr + tile.row * mine.stride + tile.col;
  const auto peer = [&](int i) { return team.ctx.translate(const_cast<T*>(from), ccl::detail::rotated(team, i + 1)); };
  ops::send_rows(from, mine.stride, peer, team.size - 1, mine.stride, tile.rows, tile.cols, gemm::staging(),
                 ops::Completion::read);
}

template <class T>
__device__ __forceinline__ void run(const ops::Call& call, const T* a, const T* b, T* out, long m, long n, long k,
                                 long a_stride, long b_stride, long out_stride, long chunk_step, uint64_t* flags,
                                 int variant, int gemm_blocks) {
  const ccl::Team& team = call.team;
  const ccl::View<T> mine = ccl::view(out + team.index * chunk_step, m, n, out_stride);
  const int64_t tiles = gemm::tiles(m, n);
  if (variant == ops::variant::specialized && static_cast<int>(blockIdx.x) >= gemm_blocks) {
    const int copier = static_cast<int>(blockIdx.x) - gemm_blocks, copiers = static_cast<int>(gridDim.x) - gemm_blocks;
    for (int64_t t = copier; t < tiles; t += copiers) {
      const ccl::Tile tile = gemm::tile(t, m, n);
      ops::wait_done(flags + t, call.seq, "ctx.ops.matmul_all_gather");
      send_to_peers(team, mine, tile);
    }
    ops::finish_sends();
    return;
  }
  const gemm::Matrix<T> A = gemm::matrix(a, m, k, a_stride), B = gemm::matrix(b, k, n, b_stride);
  for (int64_t t = blockIdx.x; t < tiles; t += gemm_blocks) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    ops::tile_product(A, B, tile.row, tile.col, mine, tile);
    if (variant == ops::variant::specialized) {
      ops::mark_done(flags + t, call.seq);
    } else {  // push: the block copies its tile, just stored (and in the cache), to every peer
      send_to_peers(team, mine, tile);
    }
  }
  ops::finish_sends();
}

// The call around run<T>, for the kernels of each element type below (ops_call.hpp says why there are three).
template <class T>
__device__ __forceinline__ void entry(const void* a, const void* b, void* out, long m, long n, long k, long a_stride,
                                      long b_stride, long out_stride, long chunk_step, uint64_t* flags, int dim,
                                      int variant, int gemm_blocks, iris::Context ctx) {
  const ops::Call call = ops::make_call(ctx, "ctx.ops.matmul_all_gather", ccl::detail::matmul_all_gather_call,
                                        variant, ops::DtypeCode<T>::value, m, n, k, dim, {out, out_stride}, {nullptr, 0});
  call.begin();
  run<T>(call, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), m, n, k, a_stride, b_stride,
         out_stride, chunk_step, flags, variant, gemm_blocks);
  call.end(true);
}

}  // namespace

__global__ void IRIS_GEMM_KERNEL ops_matmul_all_gather_float16(const void* a, const void* b, void* out, long m, long n,
    long k, long a_stride, long b_stride, long out_stride, long chunk_step, uint64_t* flags, int dim, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<iris::half>(a, b, out, m, n, k, a_stride, b_stride, out_stride, chunk_step, flags, dim, variant, gemm_blocks, ctx);
}
__global__ void IRIS_GEMM_KERNEL ops_matmul_all_gather_bfloat16(const void* a, const void* b, void* out, long m, long n,
    long k, long a_stride, long b_stride, long out_stride, long chunk_step, uint64_t* flags, int dim, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<iris::bfloat16>(a, b, out, m, n, k, a_stride, b_stride, out_stride, chunk_step, flags, dim, variant, gemm_blocks, ctx);
}
__global__ void IRIS_GEMM_KERNEL ops_matmul_all_gather_float32(const void* a, const void* b, void* out, long m, long n,
    long k, long a_stride, long b_stride, long out_stride, long chunk_step, uint64_t* flags, int dim, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<float>(a, b, out, m, n, k, a_stride, b_stride, out_stride, chunk_step, flags, dim, variant, gemm_blocks, ctx);
}
