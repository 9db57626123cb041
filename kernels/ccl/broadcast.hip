// ctx.ccl.broadcast (src/lua/iris/ccl.lua; docs/collectives.md): the root's t into every other member's
// t. Block b of every rank takes tiles b, b + blocks, ...
//   push: the root writes each tile into every other member; the others only take part in the call's
//         protocol (their t is complete once the root delivered).
//   relay: the root writes each tile into one member, its relay (the tiles dealt round the members but
//          the root), and tells it; the relay writes the tile into every member but the root and
//          itself. The root's links carry the message once instead of W - 1 times, and the relays'
//          copies run while the root is still sending.
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// The member that relays tile i: the tiles are dealt round the members but the root, in member order.
IRIS_DEVICE int relay_of(const Team& team, int64_t i, int root_index) {
  const int k = static_cast<int>(i % (team.size - 1));
  return team.rank_of(k < root_index ? k : k + 1);
}

// A relay's tile, from its own t into every member's but the root's and its own: read once, written to each.
template <class S>
__device__ __noinline__ void relay_tile(const Team team, const Tile tile, const View<S> t, const int root) {
  const detail::Shape s = detail::shape_of<S>(tile);
  detail::check_capacity<S>(s);
  const detail::Where at = detail::where(t, tile);
  detail::Fragment<S> f;
  f.load(t.ptr, at, s, detail::plain());
  for (int i = 1; i < team.size; ++i) {
    const int q = detail::rotated(team, i);
    if (q != root) f.store(detail::on(team, t.ptr, q), at, s, detail::plain());
  }
}

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, T* data, long rows, long cols, long stride, int block_m, int block_n,
                    int root, int variant) {
  const Team& team = call.team;
  const View<T> t = view(data, rows, cols, stride);
  const int64_t tiles = t.tiles(block_m, block_n);
  if (variant == detail::variant::relay && team.size > 2) {
    int root_index = 0;
    while (team.rank_of(root_index) != root) ++root_index;
    for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
      const Tile tl = tile(i, t, block_m, block_n);
      // the tile's place in this block's sequence, the same on every rank: the root's progress counts it
      const detail::CallSync sync{&call, static_cast<uint64_t>((i - blockIdx.x) / gridDim.x)};
      const int relay = relay_of(team, i, root_index);
      if (team.rank() == root) {
        const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
        detail::copy_to(team, tl, View<const T>(t), root, t, relay);
        detail::publish(sync, kStaged);  // the block's stores, then one release: the tile is in the relay's t
      } else if (team.rank() == relay) {
        const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
        detail::wait_one(sync, root, kStaged);
        relay_tile(team, tl, t, root);
      }
    }
    return;
  }
  if (team.rank() != root) return;
  for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
    const Tile tl = tile(i, t, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    detail::copy_to(team, tl, View<const T>(t), root, t, detail::kEveryPeer);  // read once, written to each
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// The root's t to every other member. A receiver writes t only once every member has arrived: a member
// it receives nothing from may still be reading t for an earlier call made with async = true.
template <class S>
IRIS_DEVICE void broadcast_ll(const detail::OneWay& ll, S* t, int64_t n, int root) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  uint64_t x[kBatch];
  if (ll.me == root) {
    load_batch(t, n, first, x);  // before the barrier: these loads overlap the call's set-up
    ll.start();
    for (Batch b = first; b.mask != 0;) {
      for (int i = 1; i < ll.size; ++i) ll.send_batch(ll.peer(i), 0, b, 0, b.mask, x);
      if (!b.next()) break;
      load_batch(t, n, b, x);
    }
    ll.finish();
    return;
  }
  ll.start();
  const int from = ll.index_of(root);
  const bool announced = ll.wait_members(from);  // each word is written after the root's line for it came
  for (Batch b = first; b.mask != 0; b.next()) {
    ll.receive_batch(from, 0, b, 0, b.mask, x);
    store_batch(t, n, b, x);
  }
  ll.finish(announced);
}

}  // namespace

// variant: push or relay.
__global__ void IRIS_EARLY_START ccl_broadcast(void* data, long rows, long cols, long stride, int block_m, int block_n, int dtype,
                          int root, int variant, uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.broadcast", detail::broadcast_call, group,
                                              variant, dtype, 0, root, rows * cols, rows, 1, block_m, block_n,
                                              {data, stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<T*>(data), rows, cols, stride, block_m, block_n, root, variant))
  call.end(call.team.rank() != root);  // the root's t is not touched by anyone; the others' is by the root
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_broadcast(void* data, long count, int dtype, int root, uint32_t group_lo, uint32_t group_hi,
                                  iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.broadcast", broadcast_call, group_lo, group_hi, variant::ll, dtype, 0,
                                 root, count, data, nullptr);
  IRIS_CCL_FOR_SIZE(dtype, T, broadcast_ll<T>(ll, static_cast<T*>(data), count, root))
}
