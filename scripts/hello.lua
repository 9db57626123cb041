-- hello: every rank writes its greeting into the next rank's memory with a kernel, then reads what it got.
--   iris-lua scripts/hello.lua            (one rank greets itself)
--   mpirun -np 4 iris-lua scripts/hello.lua
local ctx = iris.init { heap_size = "16MiB" }
local next_rank = (ctx.rank + 1) % ctx.world_size

-- A symmetric tensor: the same heap offset on every rank, so a kernel can reach any rank's copy.
local inbox = ctx:zeros(1, iris.int32)
local greet = iris.compile [[
  __global__ void greet(int* inbox, iris::Context ctx, int to_rank) {
    ctx.store(inbox, 1000 + ctx.rank, to_rank);   // write into to_rank's inbox
  }
]]
greet.greet:launch({ grid = 1, block = 1 }, inbox, ctx, next_rank)
ctx:barrier() -- every rank's kernel has finished before anyone reads

local from = inbox:get(1) - 1000
print(("hello from rank %d of %d (iris-lua %s, %s backend): rank %d greeted me"):format(ctx.rank,
  ctx.world_size, iris.version, ctx.backend, from))
iris.assert_equal(from, (ctx.rank - 1) % ctx.world_size, "the greeting came from the previous rank")
