// ctx.ccl.broadcast (src/lua/iris/ccl.lua; docs/collectives.md): the root writes its t into every other
// member's t. Block b of the root pushes tiles b, b + blocks, ...; the others only take part in the
// call's protocol (their t is complete once the root delivered).
#include <iris/impl/ccl_call.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, T* data, long rows, long cols, long stride, int block_m, int block_n,
                    int root) {
  const Team& team = call.team;
  if (team.rank() != root) return;
  const View<T> t = view(data, rows, cols, stride);
  for (int64_t i = blockIdx.x; i < t.tiles(block_m, block_n); i += gridDim.x) {
    const Tile tl = tile(i, t, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    detail::copy_to(team, tl, View<const T>(t), root, t, detail::kEveryPeer);  // read once, written to each
  }
}

}  // namespace

__global__ void ccl_broadcast(void* data, long rows, long cols, long stride, int block_m, int block_n, int dtype,
                          int root, uint32_t group_lo, uint32_t group_hi, uint64_t seq, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.broadcast", detail::broadcast_call, group, seq,
                                              detail::variant::push, dtype, 0, root, rows * cols, rows, 1, block_m, block_n,
                                              {data, stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<T*>(data), rows, cols, stride, block_m, block_n, root))
  call.end(call.team.rank() != root);  // the root's t is not touched by anyone; the others' is by the root
}
