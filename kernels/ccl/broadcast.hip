// ctx.ccl.broadcast (src/lua/iris/ccl.lua; docs/collectives.md): the root writes its t into every other
// member's t. Block b of the root pushes tiles b, b + blocks, ...; the others only take part in the
// call's protocol (their t is complete once the root delivered).
#include <iris/impl/ccl_ll.hpp>

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

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// The root's t to every other member. A receiver writes t only once every member has arrived: a member
// it receives nothing from may still be reading t for an earlier call made with async = true.
template <class S>
IRIS_DEVICE void broadcast_ll(const detail::OneWay ll, const Team team, S* t, int64_t n, int root) {
  using namespace ::iris::ccl::detail;
  const Words ws = words<S>(n);
  if (ll.me == root) {
    for (int64_t w = ws.first; w < ws.count; w += ws.step) {
      const uint64_t x = load_word(t, w, n);
      for (int i = 1; i < team.size; ++i) ll.send(ll.peer(i), 0, w, x);
    }
    ll.exchange_headers(team);
    return;
  }
  ll.exchange_headers(team);
  ll.wait_members(team, 0);
  for (int64_t w = ws.first; w < ws.count; w += ws.step) store_word(t, w, n, ll.receive(root, 0, w));
}

}  // namespace

__global__ void ccl_broadcast(void* data, long rows, long cols, long stride, int block_m, int block_n, int dtype,
                          int root, uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.broadcast", detail::broadcast_call, group,
                                              detail::variant::push, dtype, 0, root, rows * cols, rows, 1, block_m, block_n,
                                              {data, stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<T*>(data), rows, cols, stride, block_m, block_n, root))
  call.end(call.team.rank() != root);  // the root's t is not touched by anyone; the others' is by the root
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_CCL_ONE_WAY_KERNEL ccl_ll_broadcast(void* data, long count, int dtype, int root, uint32_t group_lo, uint32_t group_hi,
                                  iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const Call& call = one_way_call(ctx, "ctx.ccl.broadcast", broadcast_call, group_lo, group_hi, variant::ll, dtype, 0,
                                 root, count, data, nullptr);
  const OneWay ll = one_way(call);
  IRIS_CCL_FOR_SIZE(dtype, T, broadcast_ll<T>(ll, call.team, static_cast<T*>(data), count, root))
  call.finish();
}
