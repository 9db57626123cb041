// ctx.ccl.all_reduce (src/lua/iris/ccl.lua; docs/collectives.md): out = op over the group of inp, as
// a persistent kernel whose blocks stride over block_m x block_n tiles of a rows x cols view.
//   one_shot, ring, atomic, spinlock: block b handles tiles b, b + blocks, ...: every rank every tile
//   two_shot: a rank handles the tiles it owns (tile % group size == its index), the same way
#include <iris/impl/ccl_ll.hpp>

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

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// Every member's inp to every other member; out = their reduction in member order (the same bits on
// every rank). In place is safe: a thread writes out's words after reading inp's. Inline in the
// kernel: out of line (a function of its own per storage type, so that the compilers allot its
// registers apart) a replayed call took 0.45 to 0.55 us more from 16 to 128 KiB on 2 x H200, most of a
// small call's time going to fetching instructions (docs/perf.md "Starting early").
template <class S>
IRIS_DEVICE void ll_one_shot(const detail::OneWay ll, const S* inp, S* out, int64_t n, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  uint64_t own[kBatch];
  load_batch(inp, n, first, own);  // before the barrier: these loads overlap the call's set-up
  ll.start();
  for (int i = 1; i < ll.size; ++i) ll.send_batch(ll.peer(i), 0, first, 0, first.mask, own);
  for (Batch b = first; b.next();) {
    uint64_t x[kBatch];
    load_batch(inp, n, b, x);
    for (int i = 1; i < ll.size; ++i) ll.send_batch(ll.peer(i), 0, b, 0, b.mask, x);
  }
  for (Batch b = first; b.mask != 0; b.next()) {
    if (b.first != first.first) load_batch(inp, n, b, own);
    BatchValues<S> acc;
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) {
        acc.fold(i, b.mask, own, r);
        continue;
      }
      uint64_t x[kBatch];
      ll.receive_batch(i, 0, b, 0, b.mask, x);
      acc.fold(i, b.mask, x, r);
    }
    acc.words(b.mask, r, own);
    store_batch(out, n, b, own);
  }
  ll.finish();
}

// Words cut into one chunk per member (chunk c: words [c * per, (c + 1) * per)). Member c's chunk of
// every member's inp goes to member c (phase 0), which reduces it and sends the result to every member
// (phase 1). Each member moves 2 (size - 1) / size of the message, in two one-way rounds.
template <class S>
__device__ __noinline__ void ll_two_shot_run(const detail::OneWay ll, const S* inp, S* out, int64_t n, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Batch first = batches<S>(n);
  const int per = (first.count + ll.size - 1) / ll.size;
  uint64_t own[kBatch];
  load_batch(inp, n, first, own);  // before the barrier: these loads overlap the call's set-up
  ll.start();
  // Phase 0: each word to its chunk's member (words of one batch may lie in different chunks).
  for (Batch b = first; b.mask != 0; b.next()) {
    uint64_t x[kBatch];
    if (b.first == first.first) {
      copy_batch(own, x);
    } else {
      load_batch(inp, n, b, x);
    }
    for (int c = 0; c < ll.size; ++c) {
      const unsigned m = chunk_mask(b, per, c);
      if (c != ll.index && m != 0) ll.send_batch(c, 0, b, c * per, m, x);
    }
  }
  // This member's chunk: reduced in member order, then to every member (phase 1).
  const int shift = ll.index * per;
  for (Batch b = first; b.mask != 0; b.next()) {
    const unsigned m = chunk_mask(b, per, ll.index);
    if (m == 0) continue;
    if (b.first != first.first) load_batch(inp, n, b, m, own);
    BatchValues<S> acc;
    for (int i = 0; i < ll.size; ++i) {
      if (i == ll.index) {
        acc.fold(i, m, own, r);
        continue;
      }
      uint64_t x[kBatch];
      ll.receive_batch(i, 0, b, shift, m, x);
      acc.fold(i, m, x, r);
    }
    acc.words(m, r, own);
    for (int i = 1; i < ll.size; ++i) ll.send_batch(ll.peer(i), 1, b, shift, m, own);
    store_batch(out, n, b, m, own);
  }
  // The other chunks, from their members.
  for (Batch b = first; b.mask != 0; b.next()) {
    for (int c = 0; c < ll.size; ++c) {
      const unsigned m = chunk_mask(b, per, c);
      if (c == ll.index || m == 0) continue;
      uint64_t x[kBatch];
      ll.receive_batch(c, 1, b, c * per, m, x);
      store_batch(out, n, b, m, x);
    }
  }
  ll.finish();
}

}  // namespace

// `async`: skip the final wait for the peers where this rank's output does not depend on it
// (one_shot and ring: the peers may still be reading inp when the kernel ends).
__global__ void IRIS_EARLY_START ccl_all_reduce(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           int block_m, int block_n, int dtype, int op, int variant, uint32_t group_lo, uint32_t group_hi,
                           bool async, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.all_reduce", detail::all_reduce_call, group, variant,
                                              dtype, op, 0, rows * cols, rows, 1, block_m, block_n, {inp, in_stride}, {out, out_stride});
  call.begin();
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, block_m, block_n, static_cast<Op>(op), variant))
  const bool output_is_local = variant == detail::variant::one_shot || variant == detail::variant::ring;
  call.end(!(async && output_is_local));
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
// One kernel for every element type behind a switch: a kernel of float32 alone was no faster on an
// H200 (docs/perf.md, "The fixed cost of a call, again").
template <class T>
IRIS_DEVICE void ll_all_reduce(const detail::OneWay& ll, const void* inp, void* out, long count, int op, int variant) {
  using namespace ::iris::ccl::detail;
  typedef typename storage<T>::type S;
  const Reduction r = reduction<T>(static_cast<Op>(op));
  if (variant == variant::ll_two_shot) {
    ll_two_shot_run<S>(ll, static_cast<const S*>(inp), static_cast<S*>(out), count, r);
  } else {
    ll_one_shot<S>(ll, static_cast<const S*>(inp), static_cast<S*>(out), count, r);
  }
}

__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_all_reduce(const void* inp, void* out, long count, int dtype, int op,
                                                         int variant, uint32_t group_lo, uint32_t group_hi,
                                                         iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.all_reduce", all_reduce_call, group_lo, group_hi, variant, dtype, op, 0,
                                 count, inp, out);
  IRIS_CCL_FOR_DTYPE(dtype, T, ll_all_reduce<T>(ll, inp, out, count, op, variant))
}
