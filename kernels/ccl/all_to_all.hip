// ctx.ccl.all_to_all (src/lua/iris/ccl.lua; docs/collectives.md): chunk j of member i's inp lands in
// chunk i of member j's out. The tiles are those of one chunk (rows x cols); chunk j starts
// chunk_step elements (in_chunk_step for inp) after chunk j - 1. Block b pushes tiles b, b + blocks, ...
// of every chunk to its member.
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                    long out_stride, long in_chunk_step, long out_chunk_step, int block_m, int block_n) {
  const View<const T> src = view(inp, rows, cols, in_stride, in_chunk_step);
  const View<T> dst = view(out, rows, cols, out_stride, out_chunk_step);
  uint64_t ordinal = 0;
  for (int64_t t = blockIdx.x; t < dst.tiles(block_m, block_n); t += gridDim.x) {
    const Tile tl = tile(t, dst, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    all_to_all(call.team, tl, src, dst, detail::CallSync{&call, ordinal++});
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Chunk j of inp to chunk (this member's index) of member j's out.
template <class S>
IRIS_DEVICE void all_to_all_ll(const detail::OneWay& ll, const S* inp, S* out, int64_t n) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  const int next = ll.index + 1 == ll.size ? 0 : ll.index + 1;  // the first member sent to
  uint64_t x[kBatch];
  load_batch(inp + next * n, n, first, x);  // before the barrier: these loads overlap the call's set-up
  ll.start();
  for (Batch b = first; b.mask != 0; b.next()) {
    for (int i = 1; i < ll.size; ++i) {
      const int j = (ll.index + i) % ll.size;
      if (i > 1 || b.first != first.first) load_batch(inp + j * n, n, b, x);
      ll.send_batch(j, 0, b, 0, b.mask, x);
    }
    load_batch(inp + ll.index * n, n, b, x);
    store_batch(out + ll.index * n, n, b, x);
  }
  for (Batch b = first; b.mask != 0; b.next()) {
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) continue;
      ll.receive_batch(i, 0, b, 0, b.mask, x);
      store_batch(out + i * n, n, b, x);
    }
  }
  ll.finish();
}

}  // namespace

__global__ void IRIS_EARLY_START ccl_all_to_all(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           long in_chunk_step, long out_chunk_step, int block_m, int block_n, int dtype, int dim,
                           uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.all_to_all", detail::all_to_all_call, group,
                                              detail::variant::push, dtype, 0, 0, rows * cols * __popcll(group), rows, dim,
                                              block_m, block_n, {out, out_stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, in_chunk_step, out_chunk_step, block_m, block_n))
  call.end(true);  // this rank's out is complete once every member delivered
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_all_to_all(const void* inp, void* out, long count, int dtype, uint32_t group_lo,
                                  uint32_t group_hi, iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.all_to_all", all_to_all_call, group_lo, group_hi, variant::ll, dtype, 0, 0,
                                 count, inp, out);
  IRIS_CCL_FOR_SIZE(dtype, T, all_to_all_ll<T>(ll, static_cast<const T*>(inp), static_cast<T*>(out), count))
}
