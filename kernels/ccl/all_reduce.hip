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
// every rank). In place is safe: a thread writes out's word w after reading inp's.
template <class S>
IRIS_DEVICE void ll_one_shot(const detail::OneWay ll, const Team team, const S* inp, S* out, int64_t n, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Words ws = words<S>(n);
  for (int64_t w = ws.first; w < ws.count; w += ws.step) {
    const uint64_t x = load_word(inp, w, n);
    for (int i = 1; i < team.size; ++i) ll.send(ll.peer(i), 0, w, x);
  }
  ll.exchange_headers(team);
  for (int64_t w = ws.first; w < ws.count; w += ws.step) {
    WordValues<S> acc;
    for (int i = 0; i < team.size; ++i) {
      const int q = ll.member(i);
      const uint64_t x = q == ll.me ? load_word(inp, w, n) : ll.receive(q, 0, w);
      if (i == 0) {
        acc.load(x, r);
      } else {
        acc.combine(x, r);
      }
    }
    store_word(out, w, n, acc.word(r));
  }
}

// Words cut into one chunk per member (chunk c: words [c * per, (c + 1) * per)). Member c's chunk of
// every member's inp goes to member c (phase 0), which reduces it and sends the result to every member
// (phase 1). Each member moves 2 (size - 1) / size of the message, in two one-way rounds.
template <class S>
IRIS_DEVICE void ll_two_shot_run(const detail::OneWay ll, const Team team, const S* inp, S* out, int64_t n, detail::Reduction r) {
  using namespace ::iris::ccl::detail;
  const Words ws = words<S>(n);
  const int64_t per = (ws.count + team.size - 1) / team.size;
  for (int64_t w = ws.first; w < ws.count; w += ws.step) {
    const int c = static_cast<int>(w / per);
    if (c != team.index) ll.send(ll.member(c), 0, w - c * per, load_word(inp, w, n));
  }
  ll.exchange_headers(team);
  for (int64_t w = ws.first; w < ws.count; w += ws.step) {
    const int c = static_cast<int>(w / per);
    if (c != team.index) continue;
    WordValues<S> acc;
    for (int i = 0; i < team.size; ++i) {
      const uint64_t x = i == team.index ? load_word(inp, w, n) : ll.receive(ll.member(i), 0, w - c * per);
      if (i == 0) {
        acc.load(x, r);
      } else {
        acc.combine(x, r);
      }
    }
    const uint64_t y = acc.word(r);
    for (int i = 1; i < team.size; ++i) ll.send(ll.peer(i), 1, w - c * per, y);
    store_word(out, w, n, y);
  }
  for (int64_t w = ws.first; w < ws.count; w += ws.step) {
    const int c = static_cast<int>(w / per);
    if (c != team.index) store_word(out, w, n, ll.receive(ll.member(c), 1, w - c * per));
  }
}

}  // namespace

// `async`: skip the final wait for the peers where this rank's output does not depend on it
// (one_shot and ring: the peers may still be reading inp when the kernel ends).
__global__ void ccl_all_reduce(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
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
IRIS_DEVICE void ll_all_reduce(const void* inp, void* out, long count, int dtype, int op, int variant, uint32_t group_lo,
                               uint32_t group_hi, const iris::Context& ctx) {
  using namespace ::iris::ccl::detail;
  typedef typename storage<T>::type S;
  const Call& call = one_way_call(ctx, "ctx.ccl.all_reduce", all_reduce_call, group_lo, group_hi, variant, dtype, op, 0,
                                  count, inp, out);
  const OneWay ll = one_way(call);
  const Reduction r = reduction<T>(static_cast<Op>(op));
  if (variant == variant::ll_two_shot) {
    ll_two_shot_run<S>(ll, call.team, static_cast<const S*>(inp), static_cast<S*>(out), count, r);
  } else {
    ll_one_shot<S>(ll, call.team, static_cast<const S*>(inp), static_cast<S*>(out), count, r);
  }
  call.finish();
}

__global__ void IRIS_CCL_ONE_WAY_KERNEL ccl_ll_all_reduce(const void* inp, void* out, long count, int dtype, int op,
                                                         int variant, uint32_t group_lo, uint32_t group_hi,
                                                         iris::Context ctx) {
  IRIS_CCL_FOR_DTYPE(dtype, T, ll_all_reduce<T>(inp, out, count, dtype, op, variant, group_lo, group_hi, ctx))
}
