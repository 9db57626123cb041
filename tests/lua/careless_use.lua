-- What a careless script does gets a clear error at its line instead of a hang, a wrong result or an
-- internal error (issue 12): read-only context fields, tables that contain themselves or have holes,
-- a directory given as a kernel file.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init { heap_size = "4MiB" }
local rank = ctx.rank

-- The context's fields describe the job; assigning one would tell later kernels a wrong rank.
check.fails("ctx.rank is read-only", function() ctx.rank = 1 - ctx.rank end)
check.fails("ctx.world_size is read-only", function() ctx.world_size = 8 end)
check.fails("ctx.barrier is a method of the context and cannot be replaced", function() ctx.barrier = print end)
check.equal(ctx.rank, rank, "ctx.rank after the refused assignment")
check.equal(ctx:get_rank(), rank, "ctx:get_rank()")
ctx.my_own_note = "kept" -- names that are not the context's own stay free for the script
check.equal(ctx.my_own_note, "kept", "a script's own field")

-- A table that contains itself has no shape; a list with holes has no length.
local cyclic = {}
cyclic[1] = cyclic
check.fails("ctx:tensor: the table contains itself: element [1] is the table at the top",
  function() ctx:tensor(cyclic) end)
local deeper = { {} }
deeper[1][1] = deeper[1]
check.fails("element [1][1] is the table at [1]", function() ctx:tensor(deeper) end)
check.fails("ctx:tensor: element [2] is nil: a list of values has no holes (2 of 3 positions set)",
  function() ctx:tensor({ 1, nil, 3 }) end)
check.fails("ctx:tensor: element [2][3] is nil", function() ctx:tensor({ { 1, 2, 3 }, { 4, 5, nil, 7 } }) end)
check.fails("ctx:tensor: the table has the key 'n'", function() ctx:tensor({ 1, 2, n = 2 }) end)
check.same_list(ctx:tensor({ { 1, 2 }, { 3, 4 } }):to_table(), { 1, 2, 3, 4 }, "a proper nested list still works")

-- A directory, a device or a fifo is not a kernel file: refused without reading it.
check.fails("iris.compile_file: cannot read /tmp: it is a directory, not a regular file", function() iris.compile_file("/tmp") end)
-- A device or a fifo is refused without reading it (/dev/zero filled the memory, "not enough memory"
-- with no line; a fifo blocked forever).
local refused = check.fails("iris.compile_file: cannot read /dev/zero: it is a character device, not a regular file",
  function() iris.compile_file("/dev/zero") end)
check.truthy(refused:find("^careless_use%.lua:%d+: ") or refused:find("/careless_use%.lua:%d+: "), "the line of the call in " .. refused)
check.fails("iris.compile_file: cannot open", function() iris.compile_file("/no/such/kernel.hip") end)

-- Every rank made the same calls, so the job goes on in step.
ctx:barrier()
print(("rank %d: careless inputs refused"):format(rank))
