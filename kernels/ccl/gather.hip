// ctx.ccl.gather (src/lua/iris/ccl.lua; docs/collectives.md): chunk i of the root's out = member i's
// inp; the other members' out is not written. The tiles are those of one chunk (rows x cols), and
// chunk i of out starts chunk_step elements after chunk i - 1.
//   pull: the root's block b copies tiles b, b + blocks, ... of every member's inp into its out
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own. `in_place`:
// every member's inp is its own chunk of its out, where the root reads it.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                                 long out_stride, long chunk_step, int block_m, int block_n, int root, bool in_place) {
  const View<const T> src = view(inp, rows, cols, in_stride);
  const View<T> dst = view(out, rows, cols, out_stride, chunk_step);
  uint64_t ordinal = 0;
  if (call.team.rank() != root) return;
  for (int64_t t = blockIdx.x; t < src.tiles(block_m, block_n); t += gridDim.x) {
    const Tile tl = tile(t, src, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    gather_to(call.team, tl, src, dst, root, detail::CallSync{&call, ordinal++}, in_place);
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Every member's inp (n elements) into chunk (its index) of the root's out.
template <class S>
IRIS_DEVICE void gather_ll(const detail::OneWay& ll, const S* inp, S* out, int64_t n, int root) {
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
  // The root's own chunk is written last for each word: only once every member's line for it came (each
  // sent it after its previous kernel ended, so none still reads the root's out for an async call).
  S* mine = out + ll.index * n;
  for (Batch b = first; b.mask != 0; b.next()) {
    if (b.first != first.first) load_batch(inp, n, b, x);
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) continue;
      uint64_t y[kBatch];
      ll.receive_batch(i, 0, b, 0, b.mask, y);
      store_batch(out + i * n, n, b, y);
    }
    if (mine != inp) store_batch(mine, n, b, x);
  }
  ll.finish();
}

}  // namespace

// dim only names the call in a mismatch report: chunk_step already says where the chunks are. The root
// reads the members' inp (their own chunk of out, in place), so they are the tensors every rank must
// pass alike; `async`: a member other than the root ends without waiting for the root to have read.
__global__ void IRIS_EARLY_START ccl_gather(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           long chunk_step, int block_m, int block_n, int dtype, int dim, int root, bool in_place,
                           uint32_t group_lo, uint32_t group_hi, bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Shared read = in_place ? detail::Shared{out, out_stride} : detail::Shared{inp, in_stride};
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.gather", detail::gather_call, group, detail::variant::pull,
                                              dtype, 0, root, rows * cols, rows, dim, block_m, block_n, read,
                                              {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, chunk_step, block_m, block_n, root, in_place))
  call.end(call.team.rank() != root && !async);  // the root's out is its own work: nothing to wait for
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_gather(const void* inp, void* out, long count, int dtype, int root,
                                                      uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.gather", gather_call, group_lo, group_hi, variant::ll, dtype, 0, root,
                                 count, out, nullptr);
  IRIS_CCL_FOR_SIZE(dtype, T, gather_ll<T>(ll, static_cast<const T*>(inp), static_cast<T*>(out), count, root))
}
