// ctx.ccl.reduce (src/lua/iris/ccl.lua; docs/collectives.md): root's out = op over the group of inp;
// the other members' out is not written.
//   one_shot: the root's block b reduces tiles b, b + blocks, ... by reading them from every member
//   two_shot: tile t's owner (member t % size) reduces it and writes it into the root's out, so every
//             member reads (W - 1) / W of the message and the root takes in only the results
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                                 long out_stride, int block_m, int block_n, Op op, int variant, int root) {
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
      reduce(team, tl, src, dst, root, detail::CallSync{&call, ordinal++}, op);
    }
    return;
  }
  if (team.rank() != root) return;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tl = tile(t, dst, block_m, block_n);
    const detail::TileEvent traced(iris::event::reduce, tl, sizeof(T));
    reduce_tile(team, tl, src, dst, root, op);
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Every member's inp to the root, which reduces them in member order (the bits all_reduce gives).
// Inline in the kernel, as all_reduce's ll_one_shot (the reason is there).
template <class S>
IRIS_DEVICE void reduce_ll(const detail::OneWay ll, const S* inp, S* out, int64_t n, int root, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  uint64_t x[kBatch];
  load_batch(inp, n, first, x);  // before the barrier: these loads overlap the call's set-up
  ll.start();
  if (ll.me != root) {
    const int to = ll.index_of(root);
    for (Batch b = first; b.mask != 0;) {
      ll.send_batch(to, 0, b, 0, b.mask, x);
      if (!b.next()) break;
      load_batch(inp, n, b, x);
    }
    ll.finish();
    return;
  }
  for (Batch b = first; b.mask != 0; b.next()) {
    if (b.first != first.first) load_batch(inp, n, b, x);
    BatchValues<S> acc;
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) {
        acc.fold(i, b.mask, x, r);
        continue;
      }
      uint64_t y[kBatch];
      ll.receive_batch(i, 0, b, 0, b.mask, y);
      acc.fold(i, b.mask, y, r);
    }
    acc.words(b.mask, r, x);
    store_batch(out, n, b, x);
  }
  ll.finish();
}

}  // namespace

// `async`: a member other than the root ends without waiting for the root to finish reading its inp.
// The root waits for deliveries only where the members write its out (two_shot).
__global__ void IRIS_EARLY_START ccl_reduce(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           int block_m, int block_n, int dtype, int op, int variant, int root, uint32_t group_lo,
                           uint32_t group_hi, bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.reduce", detail::reduce_call, group, variant, dtype, op,
                                              root, rows * cols, rows, 1, block_m, block_n, {inp, in_stride},
                                              {out, out_stride});
  call.begin();
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, block_m, block_n, static_cast<Op>(op), variant, root))
  const bool is_root = call.team.rank() == root;
  call.end(is_root ? variant == detail::variant::two_shot : !async);
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_reduce(const void* inp, void* out, long count, int dtype, int op,
                                                      int root, uint32_t group_lo, uint32_t group_hi,
                                                      iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.reduce", reduce_call, group_lo, group_hi, variant::ll, dtype, op, root,
                                 count, inp, out);
  IRIS_CCL_FOR_DTYPE(dtype, T, reduce_ll<typename storage<T>::type>(ll, static_cast<const typename storage<T>::type*>(inp), static_cast<typename storage<T>::type*>(out), count, root, reduction<T>(static_cast<Op>(op))))
}
