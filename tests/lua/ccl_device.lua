-- The tile-level collectives of the device header in a user's own kernel (docs/device-api.md's worked
-- example): each rank computes a tile and reduces it across the ranks in the same kernel, epoch after
-- epoch on the same flags; and a tile-level all_gather and one_shot beside it.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank

local mod = iris.compile [[
using namespace iris::ccl;

// partial = x * (rank + 1), then out = the sum of every rank's partial, tile by tile.
__global__ void scale_and_reduce(const float* x, float* partial, float* out, uint64_t* flags, long rows, long cols,
                                 uint64_t epoch, iris::Context ctx) {
  const Team everyone = team(ctx);
  const View<float> p = view(partial, rows, cols, cols);
  const View<float> o = view(out, rows, cols, cols);
  for (int64_t t = blockIdx.x; t < p.tiles(32, 64); t += gridDim.x) {
    const Tile tl = tile(t, p, 32, 64);
    for (int i = threadIdx.x; i < tl.rows * tl.cols; i += blockDim.x) {
      const int64_t at = (tl.row + i / tl.cols) * cols + tl.col + i % tl.cols;
      partial[at] = x[at] * static_cast<float>(ctx.rank + 1);
    }
    all_reduce_two_shot(everyone, tl, p, o, tile_flags(ctx, flags, t, epoch));
  }
}

// out (W chunks of n) = every rank's inp, and sums = the one_shot sum of inp, per 1 x 512 tile.
__global__ void gather_and_sum(const int* inp, int* out, int* sums, uint64_t* gather_flags, uint64_t* sum_flags,
                               long n, uint64_t epoch, iris::Context ctx) {
  const Team everyone = team(ctx);
  const View<const int> src = view(inp, 1, n, n);
  const View<int> dst = view(out, 1, n, n, n);
  const View<int> s = view(sums, 1, n, n);
  for (int64_t t = blockIdx.x; t < src.tiles(1, 512); t += gridDim.x) {
    const Tile tl = tile(t, src, 1, 512);
    all_gather(everyone, tl, src, dst, tile_flags(ctx, gather_flags, t, epoch));
    all_reduce_one_shot(everyone, tl, src, s, tile_flags(ctx, sum_flags, t, epoch));
  }
}

// The rooted ones: root's sum = the sum of inp, root's all (W chunks of n) = every rank's inp, then
// back = chunk (this rank's index) of root's all: this rank's inp again.
__global__ void rooted(const int* inp, int* sum, int* all, int* back, uint64_t* flags, long n, int root,
                       uint64_t epoch, iris::Context ctx) {
  const Team everyone = team(ctx);
  const View<const int> src = view(inp, 1, n, n);
  const View<int> a = view(all, 1, n, n, n);
  for (int64_t t = blockIdx.x; t < src.tiles(1, 512); t += gridDim.x) {
    const Tile tl = tile(t, src, 1, 512);
    const int64_t tiles = src.tiles(1, 512);
    reduce(everyone, tl, src, view(sum, 1, n, n), root, tile_flags(ctx, flags, t, epoch));
    gather_to(everyone, tl, src, a, root, tile_flags(ctx, flags, tiles + t, epoch));
    scatter(everyone, tl, View<const int>(a), root, view(back, 1, n, n), tile_flags(ctx, flags, 2 * tiles + t, epoch));
  }
}
]]

iris.test("a kernel computes tiles and all-reduces them itself (two_shot), three epochs on the same flags", function()
  local rows, cols = 70, 150 -- 3 x 3 tiles of 32 x 64, the last ones cut
  local x, partial, out = ctx:zeros({ rows, cols }), ctx:zeros({ rows, cols }), ctx:zeros({ rows, cols })
  local flags = ctx:zeros(9, "uint64")
  for epoch = 1, 3 do
    ref.fill(x, function(i) return (i % 13) + epoch end)
    mod.scale_and_reduce:launch({ grid = 4, block = 256 }, x, partial, out, flags, rows, cols, epoch, ctx)
    ref.check(ctx, out, function(i) return ((i % 13) + epoch) * W * (W + 1) / 2 end, "epoch " .. epoch)
  end
end)

iris.test("tile-level all_gather and one_shot in one kernel", function()
  local n = 1300
  local inp, out, sums = ctx:zeros(n, "int32"), ctx:zeros(n * W, "int32"), ctx:zeros(n, "int32")
  local gf, sf = ctx:zeros(3, "uint64"), ctx:zeros(3, "uint64")
  for epoch = 1, 2 do
    ref.fill(inp, function(i) return i + 1000 * me + epoch end)
    mod.gather_and_sum:launch({ grid = 2, block = 128 }, inp, out, sums, gf, sf, n, epoch, ctx)
    ref.check(ctx, out, function(i) return i % n + 1000 * math.floor(i / n) + epoch end, "all_gather")
    ref.check(ctx, sums, function(i) return W * (i + epoch) + 1000 * W * (W - 1) / 2 end, "one_shot")
    ctx:barrier() -- the peers have read inp: the next epoch may change it
  end
end)

iris.test("tile-level reduce, gather_to and scatter in one kernel, every root", function()
  local n = 1300 -- 3 tiles of 512, the last one cut
  local inp, sum, all, back = ctx:zeros(n, "int32"), ctx:zeros(n, "int32"), ctx:zeros(n * W, "int32"), ctx:zeros(n, "int32")
  local flags = ctx:zeros(9, "uint64")
  for epoch = 1, W + 1 do
    local root = epoch % W
    ref.fill(inp, function(i) return i + 1000 * me + epoch end)
    sum:fill(-1)
    mod.rooted:launch({ grid = 2, block = 128 }, inp, sum, all, back, flags, n, root, epoch, ctx)
    ref.check(ctx, back, function(i) return i + 1000 * me + epoch end, "scatter of the gathered inp")
    if me == root then
      ref.check(ctx, sum, function(i) return W * (i + epoch) + 1000 * W * (W - 1) / 2 end, "reduce")
      ref.check(ctx, all, function(i) return i % n + 1000 * math.floor(i / n) + epoch end, "gather_to")
    else
      iris.assert_equal(sum, -1)
    end
    ctx:barrier() -- the peers have read inp and all: the next epoch may change them
  end
end)
