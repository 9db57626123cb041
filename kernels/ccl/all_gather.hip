// ctx.ccl.all_gather (src/lua/iris/ccl.lua; docs/collectives.md): every member writes its inp into
// chunk (its index) of every member's out. The tiles are those of one chunk (rows x cols), and chunk i
// of out starts chunk_step elements after chunk i - 1.
//   persistent:  block b pushes tiles b, b + blocks, ... to every member
//   partitioned: blocks are split among the members (blocks is a multiple of the group size): block b
//                pushes tiles b / size, b / size + blocks / size, ... to member b % size
#include <iris/impl/ccl_ll.hpp>

namespace {

using namespace iris::ccl;

// Out of line: the compilers handle each element type's code as a function of its own.
template <class T>
__device__ __noinline__ void run(const detail::Call& call, const T* inp, T* out, long rows, long cols, long in_stride,
                    long out_stride, long chunk_step, int block_m, int block_n, int variant) {
  const View<const T> src = view(inp, rows, cols, in_stride);
  const View<T> dst = view(out, rows, cols, out_stride, chunk_step);
  const Team& team = call.team;
  const int64_t tiles = src.tiles(block_m, block_n);
  if (variant == detail::variant::partitioned) {
    const int per_member = gridDim.x / team.size;
    const int to = team.rank_of(static_cast<int>(blockIdx.x) % team.size);
    const View<T> mine = dst.chunk(team.index);
    for (int64_t t = blockIdx.x / team.size; t < tiles; t += per_member) {
      const Tile tl = tile(t, src, block_m, block_n);
      const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
      copy_tile(team.ctx, tl, src, team.rank(), mine, to);
    }
    return;
  }
  uint64_t ordinal = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tl = tile(t, src, block_m, block_n);
    const detail::TileEvent traced(iris::event::copy, tl, sizeof(T));
    all_gather(team, tl, src, dst, detail::CallSync{&call, ordinal++});
  }
}

// ---- one way (variant ll; impl/ccl_ll.hpp) ----------------------------------------------------

// inp (n elements) into chunk (member index) of every member's out.
template <class S>
IRIS_DEVICE void all_gather_ll(const detail::OneWay& ll, const S* inp, S* out, int64_t n) {
  using namespace ::iris::ccl::detail;
  S* mine = out + ll.index * n;
  const Batch first = batches<S>(n);
  uint64_t x[kBatch];
  load_batch(inp, n, first, x);  // before the barrier: these loads overlap the call's set-up
  ll.start();
  for (Batch b = first; b.mask != 0;) {
    for (int i = 1; i < ll.size; ++i) ll.send_batch(ll.peer(i), 0, b, 0, b.mask, x);
    if (mine != inp) store_batch(mine, n, b, x);
    if (!b.next()) break;
    load_batch(inp, n, b, x);
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

// dim only names the call in a mismatch report: chunk_step already says where the chunks are.
__global__ void IRIS_EARLY_START ccl_all_gather(const void* inp, void* out, long rows, long cols, long in_stride, long out_stride,
                           long chunk_step, int block_m, int block_n, int dtype, int dim, int variant,
                           uint32_t group_lo, uint32_t group_hi, iris::Context ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const detail::Call call = detail::make_call(ctx, "ctx.ccl.all_gather", detail::all_gather_call, group, variant,
                                              dtype, 0, 0, rows * cols, rows, dim, block_m, block_n, {out, out_stride}, {nullptr, 0});
  call.begin();
  IRIS_CCL_FOR_SIZE(dtype, T, run<T>(call, static_cast<const T*>(inp), static_cast<T*>(out), rows, cols, in_stride, out_stride, chunk_step, block_m, block_n, variant))
  call.end(true);  // this rank's out is complete once every member delivered
}

// The one-way variant (src/lua/iris/ccl.lua picks it for small contiguous calls): count is the elements
// of each member's run; the staging is where iris.init put it (impl/ccl_call.hpp, Call::staging).
__global__ void IRIS_EARLY_START IRIS_CCL_ONE_WAY_KERNEL ccl_ll_all_gather(const void* inp, void* out, long count, int dtype, uint32_t group_lo,
                                  uint32_t group_hi, iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const OneWay ll = one_way_call(ctx, "ctx.ccl.all_gather", all_gather_call, group_lo, group_hi, variant::ll, dtype, 0, 0,
                                 count, out, nullptr);
  IRIS_CCL_FOR_SIZE(dtype, T, all_gather_ll<T>(ll, static_cast<const T*>(inp), static_cast<T*>(out), count))
}
