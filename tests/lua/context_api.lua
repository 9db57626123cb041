-- The context: fields, init twice, barrier, synchronize, broadcast of values and tensors, logging.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init { heap_size = "32MiB" }
local rank, world = ctx.rank, ctx.world_size

check.equal(type(ctx.device), "number", "ctx.device")
check.equal(type(ctx.backend), "string", "ctx.backend")
check.equal(ctx.world_size, iris.world_size(), "world_size")
check.truthy(tostring(ctx):find("iris context: rank " .. rank .. " of " .. world, 1, true), "tostring(ctx)")

-- a second init returns the same context; asking what it cannot give is an error
-- (ctx.heap_size: an earlier test file in the same process may have made the heap larger)
check.equal(iris.init(), ctx, "iris.init() again")
check.equal(iris.init { heap_size = ctx.heap_size }, ctx, "the same heap size again")
check.equal(iris.init { heap_size = "1MiB" }, ctx, "a smaller heap is satisfied by the running one")
check.equal(iris.init { backend = ctx.backend }, ctx, "the same backend again")
check.fails("cannot grow the heap to " .. require("iris.context").human_bytes(2 * ctx.heap_size),
  function() iris.init { heap_size = 2 * ctx.heap_size } end)
check.fails("cannot switch to backend", function() iris.init { backend = ctx.backend == "cpu" and "cuda" or "cpu" } end)
check.fails("iris.init: unknown option 'heapsize' (did you mean 'heap_size'? options: backend, heap_size, node_size)", function() iris.init { heapsize = 1 } end)
check.fails("cannot read 'lots' as a size", function() iris.init { heap_size = "lots" } end)

ctx:synchronize()
ctx:barrier()

-- broadcast of Lua values
local value = rank == 0 and { 1, 2.5, "three", true, nested = { deep = { 0 / 0, 1 / 0, -0.1 } }, [10] = false } or nil
local got = ctx:broadcast(value)
check.equal(got[3], "three", "string in a table")
check.equal(got[2], 2.5, "number")
check.equal(got[4], true, "boolean")
check.equal(got[10], false, "sparse key")
check.truthy(got.nested.deep[1] ~= got.nested.deep[1], "NaN")
check.equal(got.nested.deep[2], math.huge, "inf")
check.equal(got.nested.deep[3], -0.1, "exact double")
check.equal(ctx:broadcast(rank == world - 1 and "last" or "other", world - 1), "last", "root other than 0")
check.equal(ctx:broadcast(rank == 0 and 0.1 or 7), 0.1, "plain number")
check.equal(ctx:broadcast(nil), nil, "nil")
local binary = ctx:broadcast(rank == 0 and "a\0b\255" or "")
check.equal(binary, "a\0b\255", "binary string")
check.fails(rank == 0 and "ctx:broadcast: cannot send a function at value" or "rank 0 could not send its value",
  function() ctx:broadcast(print) end)
check.fails("ctx:broadcast: root must be a rank from 0 to", function() ctx:broadcast(1, world) end)
local cyclic = {}
cyclic.self = cyclic
if world > 1 then
  local ok, err = pcall(ctx.broadcast, ctx, rank == 0 and cyclic or nil)
  check.truthy(not ok, "a cycle fails on every rank")
  if rank == 0 then
    check.truthy(err:find("contains itself", 1, true), err)
  else
    check.truthy(err:find("rank 0 could not send its value", 1, true), err)
  end
end

-- every rank's value in one exchange (iris's own agreements: iris.reference, the labs' slowest rank)
local from_every_rank = require("iris.broadcast").from_every_rank
local all = from_every_rank({ rank = rank, text = ("rank %d"):format(rank), [1] = rank % 2 == 0 }, "test: every rank's")
for r = 0, world - 1 do
  check.equal(all[r].rank, r, "rank r's value at [r]")
  check.equal(all[r].text, ("rank %d"):format(r), "a string from rank r")
  check.equal(all[r][1], r % 2 == 0, "a boolean from rank r")
end
check.fails(("test: every rank's: rank %d could not send its value: cannot send a function"):format(world - 1),
  function() from_every_rank(rank == world - 1 and print or 1, "test: every rank's") end)

-- broadcast of a tensor, in place
local t = ctx:full({ 3, 4 }, rank, "float64")
local same = ctx:broadcast(t, world - 1)
check.equal(same, t, "the tensor itself comes back")
check.equal(t:min(), world - 1, "every element from the root")
check.equal(t:max(), world - 1, "every element from the root")
local base = ctx:zeros({ 4, 4 }, "int32")
local part = base:narrow(2, 2, 2)
if rank == 0 then part:fill(9) end
ctx:broadcast(part)
check.equal(base:sum(), 8 * 9, "a narrow view broadcasts in place")

-- logging (the text itself is checked by a CLI test)
ctx:debug("debug line from rank %d", rank)
ctx:info("info line")
ctx:warning("warning line from rank %d of %d", rank, world)

ctx:barrier()
if rank == 0 then print("context_api passed on " .. world .. " rank(s)") end
