// ctx.ccl.scatter (src/lua/iris/ccl.lua; docs/collectives.md): member i's out = chunk i of the root's
// inp. The tiles are those of one chunk (rows x cols); chunk i of inp starts chunk_step elements after
// chunk i - 1.
//   pull: block b of every member copies tiles b, b + blocks, ... of its chunk of the root's inp
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                                 long out_stride, long chunk_step, int block_m, int block_n, int root) {
  const View<const T> src = view(inp, rows, cols, in_stride, chunk_step);
  const View<T> dst = view(out, rows, cols, out_stride);
  uint64_t ordinal = 0;
  for (int64_t t = blockIdx.x; t < dst.tiles(block_m, block_n); t += gridDim.x) {
    const Tile tl = tile(t, dst, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    scatter(call.team, tl, src, root, dst, detail::CallSync{&call, ordinal++});
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Chunk i of the root's inp (n elements each) to member i. A member writes out only once every member
// has arrived (a member it hears nothing from may still be reading out for an earlier async call), and
// so does the root for its own chunk.
template <class S>
IRIS_DEVICE void scatter_ll(const detail::OneWay& ll, const S* inp, S* out, int64_t n, int root) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  uint64_t x[kBatch];
  if (ll.me == root) {
    const int next = ll.index + 1 == ll.size ? 0 : ll.index + 1;  // the first member sent to
    load_batch(inp + next * n, n, first, x);  // before the barrier: these loads overlap the call's set-up
    ll.start();
    for (Batch b = first; b.mask != 0; b.next()) {
      for (int i = 1; i < ll.size; ++i) {
        const int j = (ll.index + i) % ll.size;
        if (i > 1 || b.first != first.first) load_batch(inp + j * n, n, b, x);
        ll.send_batch(j, 0, b, 0, b.mask, x);
      }
    }
    const S* mine = inp + ll.index * n;
    if (mine == out) {
      ll.finish();
      return;
    }
    const bool announced = ll.wait_members();
    for (Batch b = first; b.mask != 0; b.next()) {
      load_batch(mine, n, b, x);
      store_batch(out, n, b, x);
    }
    ll.finish(announced);
    return;
  }
  ll.start();
  const int from = ll.index_of(root);
  const bool announced = ll.wait_members(from);  // each word is written after the root's line for it came
  for (Batch b = first; b.mask != 0; b.next()) {
    ll.receive_batch(from, 0, b, 0, b.mask, x);
    store_batch(out, n, b, x);
  }
  ll.finish(announced);
}

}  // namespace

// The members read the root's inp: `async` lets the root end without waiting for them to have read it.
__global__ void IRIS_EARLY_START ccl_scatter(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                            long chunk_step, int block_m, int block_n, int dtype, int dim, int root, uint32_t group_lo,
                            uint32_t group_hi, bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.scatter", detail::scatter_call, group, detail::variant::pull,
                                              dtype, 0, root, rows * cols, rows, dim, block_m, block_n,
                                              {inp, in_stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, chunk_step, block_m, block_n, root))
  call.end(call.team.rank() == root && !async);  // a member's out is its own work: nothing to wait for
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_scatter(const void* inp, void* out, long count, int dtype, int root,
                                                       uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.scatter", scatter_call, group_lo, group_hi, variant::ll, dtype, 0,
                                 root, count, inp, nullptr);
  IRIS_CCL_FOR_SIZE(dtype, T, scatter_ll<T>(ll, static_cast<const T*>(inp), static_cast<T*>(out), count, root))
}
