// ctx.ccl.reduce_scatter (src/lua/iris/ccl.lua; docs/collectives.md): member i's out is chunk i of the
// reduction of every member's inp (MPI, NCCL and torch's convention). The tiles are those of one chunk
// (rows x cols); chunk i of inp starts chunk_step elements after chunk i - 1. Block b reduces tiles b,
// b + blocks, ... by reading them from every member.
#include <iris/impl/ccl_call.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                    long out_stride, long chunk_step, int block_m, int block_n, Op op) {
  const View<const T> src = view(inp, rows, cols, in_stride, chunk_step);
  const View<T> dst = view(out, rows, cols, out_stride);
  uint64_t ordinal = 0;
  for (int64_t t = blockIdx.x; t < dst.tiles(block_m, block_n); t += gridDim.x) {
    const Tile tl = tile(t, dst, block_m, block_n);
    const detail::TileEvent traced(iris::event::reduce, tl, sizeof(T));
    reduce_scatter(call.team, tl, src, dst, detail::CallSync{&call, ordinal++}, op);
  }
}

}  // namespace

// `async`: end without waiting for the members to finish reading this rank's inp.
__global__ void ccl_reduce_scatter(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                               long chunk_step, int block_m, int block_n, int dtype, int dim, int op,
                               uint32_t group_lo, uint32_t group_hi, uint64_t seq, bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.reduce_scatter", detail::reduce_scatter_call, group, seq,
                                              detail::variant::two_shot, dtype, op, 0, rows * cols * __popcll(group), rows, dim,
                                              block_m, block_n, {inp, in_stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, chunk_step, block_m, block_n, static_cast<Op>(op)))
  call.end(!async);
}
