-- A released block is handed out again only after the kernels of the rank that released it have
-- finished (docs/memory.md). Rank 1 launches a kernel that waits on the device clock, then writes 7s
-- into rank 0's copy of a tensor; rank 1 frees the tensor at once, every rank frees it, and the next
-- allocation of that size reuses the block and zeroes it. Rank 0's zeroing must come after rank 1's
-- late writes, or rank 0 ends up with 7s in a tensor that `zeros` promised to be zero.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"

local ctx = iris.init { heap_size = "32MiB" }
-- Compiled on every backend (CI cross-compiles it for cuda and hip) before deciding whether to run it.
local mod = iris.compile([[
// Waits `ns` on the device clock, then stores `value` into `n` elements of `dst` in rank `to`'s heap.
__global__ void late_fill(int* dst, size_t n, int value, uint64_t ns, iris::Context ctx, int to) {
  if (threadIdx.x == 0) {
    const unsigned long long start = iris::detail::clock_ns();
    while (iris::detail::clock_ns() - start < ns) {}
  }
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    ctx.store(dst + i, value, to);
}
]])
if ctx.world_size < 2 then iris.skip("one rank: no other rank's kernel can write its copy") end
if ctx.backend == "cpu" then
  iris.skip("cpu launches have finished when they return: no kernel is in flight at a release")
end

local n = 256 * 1024
local t = ctx:zeros(n, "int32")
local offset = t:offset()
ctx:barrier()
if ctx.rank == 1 then mod.late_fill:launch({ grid = 64, block = 256 }, t, n, 7, 200 * 1000 * 1000, ctx, 0) end
t:free()
local u = ctx:zeros(n, "int32")
check.equal(u:offset(), offset, "the released block is reused")
ctx:barrier()
check.equal(u:max(), 0, "rank " .. ctx.rank .. "'s copy of the new tensor, after rank 1's late writes into the old one")
