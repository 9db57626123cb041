// ctx.ops.matmul_all_reduce (src/lua/iris/ops.lua; docs/ops.md): c = the sum over the ranks of a_r b_r.
// A persistent grid strides over the 128 x 128 tiles of c; each block computes its tile's partial
// product, stores it into its own c (the tile-level collectives reduce in place), and hands it to the
// chosen all-reduce in 32 x 64 sub-tiles at once, while the other blocks go on multiplying: the
// reduction of one tile overlaps the products of the next ones. The partial's kReady is published per
// sub-tile (the tile is written by this kernel); completion is the call's deliveries.
// specialized: blocks [0, gemm_blocks) only multiply, storing each partial tile into c and flagging it;
// the blocks after them reduce the flagged tiles (two_shot), so no GEMM block waits on a peer.
#include <iris/impl/ops_call.hpp>

namespace {

using namespace iris;

template <class T>
__device__ __forceinline__ void run(const ops::Call& call, const T* a, const T* b, T* c, long m, long n, long k,
                                 long a_stride, long b_stride, long c_stride, uint64_t* flags, int variant,
                                 int gemm_blocks) {
  const gemm::Matrix<T> A = gemm::matrix(a, m, k, a_stride), B = gemm::matrix(b, k, n, b_stride);
  const ccl::View<T> out = ccl::view(c, m, n, c_stride);
  uint64_t ordinal = 0;
  if (variant == ops::variant::specialized) {
    const int block = static_cast<int>(blockIdx.x);
    if (block < gemm_blocks) {
      for (int64_t t = block; t < gemm::tiles(m, n); t += gemm_blocks) {
        const ccl::Tile tile = gemm::tile(t, m, n);
        ops::tile_product(A, B, tile.row, tile.col, out, tile);
        ops::mark_done(flags + t, call.seq);
      }
      return;
    }
    const int reducers = static_cast<int>(gridDim.x) - gemm_blocks;
    for (int64_t t = block - gemm_blocks; t < gemm::tiles(m, n); t += reducers) {
      const ccl::Tile tile = gemm::tile(t, m, n);
      ops::wait_done(flags + t, call.seq, "ctx.ops.matmul_all_reduce");
      ops::for_each_subtile(tile, m, n, [&](const ccl::Tile& sub) {
        ccl::all_reduce_two_shot(call.team, sub, out, out, ops::CallSync{&call, ordinal++, true});
      });
    }
    return;
  }
  for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    ops::tile_product(A, B, tile.row, tile.col, out, tile);  // registers of its own (ops_call.hpp)
    ops::for_each_subtile(tile, m, n, [&](const ccl::Tile& sub) {
      const ops::CallSync sync{&call, ordinal++, true};
      switch (variant) {
        case ops::variant::one_shot: ccl::all_reduce_one_shot(call.team, sub, out, out, sync); break;
        case ops::variant::ring: ccl::all_reduce_ring(call.team, sub, out, out, sync); break;
        case ops::variant::atomic: ccl::all_reduce_atomic(call.team, sub, out, out, sync); break;
        case ops::variant::spinlock:
          ccl::all_reduce_spinlock(call.team, sub, out, out, sync, ccl::detail::lock_of(call, sub.index));
          break;
        default: ccl::all_reduce_two_shot(call.team, sub, out, out, sync); break;
      }
    });
  }
}

// The call around run<T>, for the kernels of each element type below (ops_call.hpp says why there are three).
template <class T>
__device__ __forceinline__ void entry(const void* a, const void* b, void* c, long m, long n, long k, long a_stride,
                                      long b_stride, long c_stride, void* flags, int variant, int gemm_blocks,
                                      iris::Context ctx) {
  const ops::Call call = ops::make_call(ctx, "ctx.ops.matmul_all_reduce", ccl::detail::matmul_all_reduce_call,
                                        variant, ops::DtypeCode<T>::value, m, n, k, 1, {c, c_stride}, {nullptr, 0});
  call.begin();
  run<T>(call, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), m, n, k, a_stride, b_stride,
         c_stride, static_cast<uint64_t*>(flags), variant, gemm_blocks);
  call.end(true);
}

}  // namespace

__global__ void ops_matmul_all_reduce_float16(const void* a, const void* b, void* c, long m, long n, long k,
    long a_stride, long b_stride, long c_stride, void* flags, int variant, int gemm_blocks, iris::Context ctx) {
  entry<iris::half>(a, b, c, m, n, k, a_stride, b_stride, c_stride, flags, variant, gemm_blocks, ctx);
}
__global__ void ops_matmul_all_reduce_bfloat16(const void* a, const void* b, void* c, long m, long n, long k,
    long a_stride, long b_stride, long c_stride, void* flags, int variant, int gemm_blocks, iris::Context ctx) {
  entry<iris::bfloat16>(a, b, c, m, n, k, a_stride, b_stride, c_stride, flags, variant, gemm_blocks, ctx);
}
__global__ void ops_matmul_all_reduce_float32(const void* a, const void* b, void* c, long m, long n, long k,
    long a_stride, long b_stride, long c_stride, void* flags, int variant, int gemm_blocks, iris::Context ctx) {
  entry<float>(a, b, c, m, n, k, a_stride, b_stride, c_stride, flags, variant, gemm_blocks, ctx);
}
