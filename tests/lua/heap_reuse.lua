-- Freed memory is reused: t:free(), garbage collection at different moments per rank, and the loop
-- `for i = 1, N do local t = ctx:zeros(n) end` in a heap that holds only a few t.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ffi = require "ffi"
local check = require "check"
local C = ffi.C

local ctx = iris.init { heap_size = "32MiB" }
local rank, world = ctx.rank, ctx.world_size
local n = 16 * 1024 -- 64 KiB of float32

-- Fill the heap but for room for 4 such tensors (after collecting what earlier code left), so that
-- the loops below run in a heap that holds only a few of them, whatever size the heap has.
collectgarbage()
ctx:zeros(1):free() -- an allocation's exchange carries the releases
local filler = ctx:empty(ctx:memory_stats().largest_free - 4 * n * 4, "uint8")
check.truthy(ctx:memory_stats().largest_free >= 4 * n * 4, "room for 4 tensors left")

-- t:free() gives the block back at the next allocation
local a = ctx:zeros(n)
local offset = a:offset()
a:free()
local b = ctx:zeros(n)
check.equal(b:offset(), offset, "a freed block is reused")
b:free()

-- releases at different moments per rank: rank r lets go of `held` after r more allocations
local held = ctx:zeros(n)
local held_offset = held:offset()
for step = 0, world - 1 do
  local t = ctx:zeros(16)
  check.truthy(t:offset() ~= held_offset, "a block is not reused while a rank still holds it")
  if step == rank then
    held:free()
    held = nil
  end
  t:free()
end
ctx:zeros(16):free() -- this allocation's exchange carries the last rank's release
local stats = ctx:memory_stats()
check.same_on_all_ranks(ctx, stats.free, "free bytes")
check.same_on_all_ranks(ctx, stats.largest_free, "largest free block")
check.equal(stats.awaiting_other_ranks, 0, "nothing waits once every rank released")

-- one full collection cycle releases a tensor nobody references (the out-of-heap retry relies on it)
collectgarbage("collect")
collectgarbage("stop") -- no incremental step may release it before we count
do
  local garbage = ctx:zeros(n)
end
local before = ctx:memory_stats().pending_releases
collectgarbage("collect")
check.equal(ctx:memory_stats().pending_releases, before + 1, "released by one collection cycle")
collectgarbage("restart")

-- the garbage-collection loop
local iterations = tonumber(arg[1]) or ({ 100000, 5000, 2000, 1000 })[math.min(world, 4)]
local started = C.iris_wall_time()
for _ = 1, iterations do
  local t = ctx:zeros(n)
end
local seconds = C.iris_wall_time() - started
check.same_on_all_ranks(ctx, ctx:memory_stats().free, "free bytes after the loop")
if rank == 0 then
  print(("gc loop: %d x ctx:zeros(%d) in a heap with room for 4 of them: %.2f s, %.1f us each, %d rank(s)"):format(
    iterations, n, seconds, seconds / iterations * 1e6, world))
end

-- garbage collected at different moments per rank (rank 0 collects every time, the others never)
for i = 1, 50 do
  local t = ctx:zeros(n)
  t = nil
  if rank == 0 then collectgarbage() end
end
check.same_on_all_ranks(ctx, ctx:memory_stats().free, "free bytes after uneven collection")

filler:free()
ctx:barrier()
if rank == 0 then print("heap_reuse passed on " .. world .. " rank(s)") end
