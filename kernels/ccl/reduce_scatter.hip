// ctx.ccl.reduce_scatter (src/lua/iris/ccl.lua; docs/collectives.md): member i's out is chunk i of the
// reduction of every member's inp (MPI, NCCL and torch's convention). The tiles are those of one chunk
// (rows x cols); chunk i of inp starts chunk_step elements after chunk i - 1. Block b reduces tiles b,
// b + blocks, ... by reading them from every member.
#include <iris/impl/ccl_ll.hpp>

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

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Chunk i of inp (n elements each) to member i, which reduces what it gets in member order. Inline in
// the kernel, as all_reduce's ll_one_shot (the reason is there).
template <class S>
IRIS_DEVICE void reduce_scatter_ll(const detail::OneWay ll, const S* inp, S* out, int64_t n, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  const int next = ll.index + 1 == ll.size ? 0 : ll.index + 1;  // the first member sent to
  const S* own_chunk = inp + ll.index * n;
  uint64_t x[kBatch], own[kBatch];
  load_batch(inp + next * n, n, first, x);  // before the barrier: these loads overlap the call's set-up
  load_batch(own_chunk, n, first, own);
  ll.start();
  for (Batch b = first; b.mask != 0; b.next()) {
    for (int i = 1; i < ll.size; ++i) {
      const int j = (ll.index + i) % ll.size;
      if (i > 1 || b.first != first.first) load_batch(inp + j * n, n, b, x);
      ll.send_batch(j, 0, b, 0, b.mask, x);
    }
  }
  for (Batch b = first; b.mask != 0; b.next()) {
    if (b.first != first.first) load_batch(own_chunk, n, b, own);
    BatchValues<S> acc;
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) {
        acc.fold(i, b.mask, own, r);
        continue;
      }
      ll.receive_batch(i, 0, b, 0, b.mask, x);
      acc.fold(i, b.mask, x, r);
    }
    acc.words(b.mask, r, own);
    store_batch(out, n, b, own);
  }
  ll.finish();
}

}  // namespace

// `async`: end without waiting for the members to finish reading this rank's inp.
__global__ void IRIS_EARLY_START ccl_reduce_scatter(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                               long chunk_step, int block_m, int block_n, int dtype, int dim, int op,
                               uint32_t group_lo, uint32_t group_hi, bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.reduce_scatter", detail::reduce_scatter_call, group,
                                              detail::variant::two_shot, dtype, op, 0, rows * cols * __popcll(group), rows, dim,
                                              block_m, block_n, {inp, in_stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, chunk_step, block_m, block_n, static_cast<Op>(op)))
  call.end(!async);
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_reduce_scatter(const void* inp, void* out, long count, int dtype, int op, uint32_t group_lo,
                                      uint32_t group_hi,
                                      iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.reduce_scatter", reduce_scatter_call, group_lo, group_hi, variant::ll,
                                 dtype, op, 0, count, inp, nullptr);
  IRIS_CCL_FOR_DTYPE(dtype, T, reduce_scatter_ll<typename storage<T>::type>(ll, static_cast<const typename storage<T>::type*>(inp), static_cast<typename storage<T>::type*>(out), count, reduction<T>(static_cast<Op>(op))))
}
