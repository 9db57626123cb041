// ctx.ccl.all_reduce (src/lua/iris/ccl.lua; docs/collectives.md): out = op over the group of inp, as
// a persistent kernel whose blocks stride over block_m x block_n tiles of a rows x cols view.
//   one_shot, ring, atomic, spinlock: block b handles tiles b, b + blocks, ...: every rank every tile
//   two_shot: a rank handles the tiles it owns (tile % group size == its index), the same way
#include <iris/impl/ccl_call.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                    long out_stride, int block_m, int block_n, Op op, int variant) {
  const View<const T> src = view(inp, rows, cols, in_stride);
  const View<T> dst = view(out, rows, cols, out_stride);
  const Team& team = call.team;
  const int64_t tiles = dst.tiles(block_m, block_n);
  uint64_t ordinal = 0;
  if (variant == detail::variant::two_shot) {
    for (int64_t t = team.index + static_cast<int64_t>(blockIdx.x) * team.size; t < tiles;
         t += static_cast<int64_t>(gridDim.x) * team.size) {
      const Tile tl = tile(t, dst, block_m, block_n);
      const detail::TileEvent traced(iris::event::reduce, tl, sizeof(T));
      all_reduce_two_shot(team, tl, src, dst, detail::CallSync{&call, ordinal++}, op);
    }
    return;
  }
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tl = tile(t, dst, block_m, block_n);
    const detail::TileEvent traced(iris::event::reduce, tl, sizeof(T));
    const detail::CallSync sync{&call, ordinal++};
    switch (variant) {
      case detail::variant::ring: all_reduce_ring(team, tl, src, dst, sync, op); break;
      case detail::variant::atomic: all_reduce_atomic(team, tl, src, dst, sync, op); break;
      case detail::variant::spinlock: all_reduce_spinlock(team, tl, src, dst, sync, detail::lock_of(call, t), op); break;
      default: all_reduce_one_shot(team, tl, src, dst, sync, op); break;
    }
  }
}

}  // namespace

// `async`: skip the final wait for the peers where this rank's output does not depend on it
// (one_shot and ring: the peers may still be reading inp when the kernel ends).
__global__ void ccl_all_reduce(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           int block_m, int block_n, int dtype, int op, int variant, uint32_t group_lo, uint32_t group_hi, uint64_t seq,
                           bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.all_reduce", detail::all_reduce_call, group, seq, variant,
                                              dtype, op, 0, rows * cols, rows, 1, block_m, block_n, {inp, in_stride}, {out, out_stride});
  call.begin();
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, block_m, block_n, static_cast<Op>(op), variant))
  const bool output_is_local = variant == detail::variant::one_shot || variant == detail::variant::ring;
  call.end(!(async && output_is_local));
}
