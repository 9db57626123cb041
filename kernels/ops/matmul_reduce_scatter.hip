// ctx.ops.matmul_reduce_scatter (src/lua/iris/ops.lua; docs/ops.md): member r's out is chunk r (along
// dim) of the sum over the members of a_q b, as ctx.ccl.reduce_scatter's. Blocks stride over the tiles
// of one chunk; for its tile a block computes the partial product of that tile in every chunk into this
// rank's `partial` workspace (m x n), then reduces its own chunk's tile from every member's partial, in
// 32 x 64 sub-tiles (ccl::reduce_scatter), while other blocks go on multiplying.
// specialized: blocks [0, gemm_blocks) only multiply, a tile in every chunk, and flag the tile; the blocks
// after them reduce the flagged tiles, so no GEMM block waits on a peer.
#include <iris/impl/ops_call.hpp>

namespace {

using namespace iris;

template <class T>
__device__ __forceinline__ void run(const ops::Call& call, const T* a, const T* b, T* out, T* partial, long m, long n,
                                 long k, long a_stride, long b_stride, long out_stride, int dim, uint64_t* flags,
                                 int variant, int gemm_blocks) {
  const ccl::Team& team = call.team;
  const int64_t cm = dim == 1 ? m / team.size : m, cn = dim == 1 ? n : n / team.size;
  const int64_t chunk_step = dim == 1 ? cm * n : cn;  // between chunks of the m x n partial
  const ccl::View<T> partials = ccl::view(partial, cm, cn, n, chunk_step);
  const ccl::View<T> result = ccl::view(out, cm, cn, out_stride);
  const gemm::Matrix<T> A = gemm::matrix(a, m, k, a_stride), B = gemm::matrix(b, k, n, b_stride);
  uint64_t ordinal = 0;
  const bool specialized = variant == ops::variant::specialized;
  const int block = static_cast<int>(blockIdx.x);
  const int blocks = specialized ? gemm_blocks : static_cast<int>(gridDim.x);
  if (!specialized || block < gemm_blocks) {
    for (int64_t t = block; t < gemm::tiles(cm, cn); t += blocks) {
      const ccl::Tile tile = gemm::tile(t, cm, cn);
      for (int i = 1; i <= team.size; ++i) {  // this rank's own chunk last
        const int j = (team.index + i) % team.size;
        ops::tile_product(A, B, tile.row + (dim == 1 ? j * cm : 0), tile.col + (dim == 1 ? 0 : j * cn),
                          partials.chunk(j), tile);  // registers of its own (ops_call.hpp)
      }
      if (specialized) {
        ops::mark_done(flags + t, call.seq);
        continue;
      }
      ops::for_each_subtile(tile, cm, cn, [&](const ccl::Tile& sub) {
        ccl::reduce_scatter(team, sub, partials, result, ops::CallSync{&call, ordinal++, true});
      });
    }
    return;
  }
  const int reducers = static_cast<int>(gridDim.x) - gemm_blocks;
  for (int64_t t = block - gemm_blocks; t < gemm::tiles(cm, cn); t += reducers) {
    const ccl::Tile tile = gemm::tile(t, cm, cn);
    ops::wait_done(flags + t, call.seq, "ctx.ops.matmul_reduce_scatter");
    ops::for_each_subtile(tile, cm, cn, [&](const ccl::Tile& sub) {
      ccl::reduce_scatter(team, sub, partials, result, ops::CallSync{&call, ordinal++, true});
    });
  }
}

// The call around run<T>, for the kernels of each element type below (ops_call.hpp says why there are three).
template <class T>
__device__ __forceinline__ void entry(const void* a, const void* b, void* out, void* partial, long m, long n, long k,
                                      long a_stride, long b_stride, long out_stride, int dim, void* flags,
                                      int variant, int gemm_blocks, iris::Context ctx) {
  const ops::Call call = ops::make_call(ctx, "ctx.ops.matmul_reduce_scatter", ccl::detail::matmul_reduce_scatter_call,
                                        variant, ops::DtypeCode<T>::value, m, n, k, dim,
                                        {partial, n}, {nullptr, 0});
  call.begin();
  run<T>(call, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), static_cast<T*>(partial), m, n,
         k, a_stride, b_stride, out_stride, dim, static_cast<uint64_t*>(flags), variant, gemm_blocks);
  call.end(true);
}

}  // namespace

__global__ void ops_matmul_reduce_scatter_float16(const void* a, const void* b, void* out, void* partial, long m,
    long n, long k, long a_stride, long b_stride, long out_stride, int dim, void* flags, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<iris::half>(a, b, out, partial, m, n, k, a_stride, b_stride, out_stride, dim, flags, variant, gemm_blocks, ctx);
}
__global__ void ops_matmul_reduce_scatter_bfloat16(const void* a, const void* b, void* out, void* partial, long m,
    long n, long k, long a_stride, long b_stride, long out_stride, int dim, void* flags, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<iris::bfloat16>(a, b, out, partial, m, n, k, a_stride, b_stride, out_stride, dim, flags, variant, gemm_blocks, ctx);
}
__global__ void ops_matmul_reduce_scatter_float32(const void* a, const void* b, void* out, void* partial, long m,
    long n, long k, long a_stride, long b_stride, long out_stride, int dim, void* flags, int variant,
    int gemm_blocks, iris::Context ctx) {
  entry<float>(a, b, out, partial, m, n, k, a_stride, b_stride, out_stride, dim, flags, variant, gemm_blocks, ctx);
}
