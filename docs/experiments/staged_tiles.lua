-- Experiment (docs/perf.md, "Copies from a few SMs"): what one staged copy of a GEMM tile (128 rows of
-- 256 bytes, bfloat16) costs, against the threads' loop, when 16 blocks send tile after tile to a peer
-- (ctx.ops.matmul_all_gather's communication blocks). Ways: 0 the threads' copy_rows (4 loads in flight
-- each), 3 the same with 8, 1 staged with the writes left in flight (Completion::read), 2 staged and
-- waited for (written); and the slot size.
--   IRIS_BACKEND=cuda mpirun -np 2 iris-lua docs/experiments/staged_tiles.lua [blocks] [MiB]
local blocks = tonumber(arg[1]) or 16
local mib = tonumber(arg[2]) or 64
local ctx = iris.init { heap_size = 3 * mib * 1024 * 1024 + 64 * 1024 * 1024 }
local rows_total = mib * 1024 * 1024 / (8192 * 2) -- a matrix 8192 bfloat16 wide
local source = [[
#include <iris/impl/ops_call.hpp>
using namespace iris;
__global__ void IRIS_GEMM_KERNEL send_tiles(const iris::bfloat16* src, iris::bfloat16* dst, long rows, long cols,
                                            iris::Context ctx, int peer, int way) {
  const long tiles_n = cols / 128, tiles = rows / 128 * tiles_n;
  for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long offset = (t / tiles_n) * 128 * cols + (t % tiles_n) * 128;
    const iris::bfloat16* from = src + offset;
    iris::bfloat16* to = ctx.translate(dst + offset, peer);
    if (way == 0 || way == 3) {  // the threads: 4 (ctx.ops's) or 8 loads in flight each
      if (way == 0) ops::copy_rows(from, cols, to, cols, 128, 128);
      else ops::copy_rows<iris::bfloat16, 8>(from, cols, to, cols, 128, 128);
      __syncthreads();
    } else {
      // The bulk unit directly (ops::send_rows leaves rows this short to the threads); the threads
      // where it cannot (the cpu backend, other GPUs).
      uint8_t* to_bytes = reinterpret_cast<uint8_t*>(to);
      if (!iris::detail::staged::copy_rows_bulk(reinterpret_cast<const uint8_t*>(from), cols * 2,
                                                [to_bytes](int) { return to_bytes; }, 1, cols * 2, 128, 256,
                                                gemm::staging(), way == 1 ? ops::Completion::read
                                                                          : ops::Completion::written)) {
        ops::copy_rows(from, cols, to, cols, 128, 128);
        __syncthreads();
      }
    }
  }
  ops::finish_sends();
}
]]
local mods = {}
for _, slot in ipairs { 4096, 8192, 16384 } do mods[slot] = iris.compile(source, { defines = { IRIS_STAGED_SLOT_BYTES = slot } }) end
mods.fence = iris.compile(source, { defines = { IRIS_STAGED_FENCE = 1 } })
local src = ctx:zeros({ rows_total, 8192 }, "bfloat16")
local dst = ctx:zeros({ rows_total, 8192 }, "bfloat16")
local bytes = rows_total * 8192 * 2
local tiles = rows_total / 128 * 64
local peer = (ctx.rank + 1) % ctx.world_size -- itself at one rank
ctx:barrier()
if ctx.rank == 0 then
  print(("%d blocks send %d tiles of 32 KiB (%d MiB) to rank %d; per block: %d tiles"):format(blocks, tiles, mib, peer, tiles / blocks))
  print(("%-28s %9s %10s %12s"):format("way", "GB/s", "GB/s/SM", "us per tile"))
  local ways = { { "threads' copy_rows", 0, 8192 }, { "threads, 8 loads in flight", 3, 8192 } }
  for _, slot in ipairs { 4096, 8192, 16384 } do
    ways[#ways + 1] = { ("staged, in flight, %d B"):format(slot), 1, slot }
    ways[#ways + 1] = { ("staged, written, %d B"):format(slot), 2, slot }
  end
  ways[#ways + 1] = { "staged, in flight, 2 fences", 1, "fence" }
  for _, w in ipairs(ways) do
    local k = mods[w[3]].send_tiles
    local r = iris.bench(function() k:launch({ grid = blocks, block = 256 }, src, dst, rows_total, 8192, ctx, peer, w[2]) end)
    local gbs = bytes / (r.median_ms * 1e-3) / 1e9
    print(("%-28s %9.1f %10.2f %12.2f"):format(w[1], gbs, gbs / blocks, r.median_ms * 1e3 / (tiles / blocks)))
  end
end
ctx:barrier()
