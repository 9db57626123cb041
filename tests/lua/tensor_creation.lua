-- Every creation function: shapes, default dtypes, values, random streams, and their argument errors.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init { heap_size = "32MiB" }

-- zeros, ones, empty, full and the *_like forms
local z = ctx:zeros({ 2, 3 })
check.equal(z.dtype, "float32", "default dtype")
check.same_list(z:shape(), { 2, 3 }, "shape")
check.equal(z:dim(), 2, "dim")
check.equal(z:sum(), 0, "zeros")
check.equal(ctx:ones(5, iris.int16):sum(), 5, "ones")
check.equal(ctx:empty(7, "uint8"):numel(), 7, "empty")
check.same_list(ctx:full({ 2 }, 2.5, "float64"):to_table(), { 2.5, 2.5 }, "full")
check.equal(ctx:full(3, true).dtype, "bool", "full infers bool from a boolean")
local zl = ctx:zeros_like(ctx:ones({ 4, 2 }, "int32"))
check.equal(zl.dtype, "int32", "zeros_like dtype")
check.same_list(zl:shape(), { 4, 2 }, "zeros_like shape")
check.equal(ctx:ones_like(zl, "float64"):sum(), 8, "ones_like with dtype")
check.equal(ctx:full_like(zl, 3):sum(), 24, "full_like")
check.equal(ctx:empty_like(zl).dtype, "int32", "empty_like")
check.same_list(ctx:zeros({}):shape(), {}, "0-d shape")

-- arange and linspace
local a = ctx:arange(5)
check.equal(a.dtype, "int64", "arange of whole numbers is int64")
check.same_list(a:to_table(), { 0, 1, 2, 3, 4 }, "arange(n)")
check.same_list(ctx:arange(2, 11, 3):to_table(), { 2, 5, 8 }, "arange with step")
check.same_list(ctx:arange(5, 0, -2):to_table(), { 5, 3, 1 }, "arange downwards")
local f = ctx:arange(0, 1, 0.25)
check.equal(f.dtype, "float32", "arange with a fraction is float32")
check.same_list(f:to_table(), { 0, 0.25, 0.5, 0.75 }, "fractional arange")
check.equal(ctx:arange(4, "float64").dtype, "float64", "arange(n, dtype)")
check.equal(ctx:arange(1, 4, "int8").dtype, "int8", "arange(start, stop, dtype)")
check.equal(ctx:arange(0, 10, 2, "int32"):sum(), 20, "arange(start, stop, step, dtype)")
check.fails("ctx:arange: step must not be 0", function() ctx:arange(0, 5, 0) end)
check.fails("ctx:arange: start 3, stop 1, step 1 is an empty range", function() ctx:arange(3, 1) end)
check.fails("ctx:arange: start 0, stop 0, step 1 is an empty range", function() ctx:arange(0) end)
check.same_list(ctx:linspace(0, 1, 5, "float64"):to_table(), { 0, 0.25, 0.5, 0.75, 1 }, "linspace")
check.equal(ctx:linspace(-1, 1, 3).dtype, "float32", "linspace default dtype")
check.same_list(ctx:linspace(2, 3, 1):to_table(), { 2 }, "linspace of one")
check.equal(ctx:linspace(2, 3, 0):numel(), 0, "linspace of none")

-- from Lua values
local t = ctx:tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
check.same_list(t:shape(), { 2, 3 }, "nested shape")
check.equal(t:get(2, 1), 4, "nested values")
check.equal(ctx:tensor(7):dim(), 0, "a number is a 0-d tensor")
check.equal(ctx:tensor({ true, false }).dtype, "bool", "booleans give bool")
check.fails("ctx:tensor: element [2] has 1 entries, expected a table of 2 (ragged nesting)",
  function() ctx:tensor({ { 1, 2 }, { 3 } }) end)
check.fails("ctx:tensor: 1.5 is not an int32 value", function() ctx:tensor({ 1.5 }, "int32") end)

-- random numbers
local r = ctx:rand({ 1000 })
check.truthy(r:min() >= 0 and r:max() < 1, "rand in [0, 1)")
check.truthy(math.abs(r:sum() / 1000 - 0.5) < 0.05, "rand mean")
local h = ctx:rand(5000, "float16")
check.truthy(h:min() >= 0 and h:max() < 1, "float16 rand stays below 1")
check.truthy(ctx:rand(10, nil, 1):equal(ctx:rand(10, nil, 1)), "the same seed gives the same numbers")
check.truthy(ctx:rand(10, 1):equal(ctx:rand(10, nil, 1)), "the dtype may be left out before a seed")
check.truthy(not ctx:rand(10, nil, 1):equal(ctx:rand(10, nil, 2)), "different seeds differ")
check.truthy(not ctx:rand(10):equal(ctx:rand(10)), "successive draws from the generator differ")
local n = ctx:randn(20000, "float64", 3)
check.truthy(math.abs(n:sum() / 20000) < 0.05, "randn mean")
local ri = ctx:randint(-3, 4, { 50, 40 })
check.equal(ri.dtype, "int64", "randint default dtype")
check.truthy(ri:min() == -3 and ri:max() == 3, "randint covers [low, high)")
check.equal(ctx:randint(0, 2, 100, "bool").dtype, "bool", "randint into bool")
check.fails("ctx:randint: [0, 300) does not fit dtype uint8", function() ctx:randint(0, 300, 5, "uint8") end)
check.fails("ctx:rand makes floating-point numbers, int32 is not a floating-point dtype",
  function() ctx:rand(5, "int32") end)

-- streams: different per rank unless shared; the generator is reproducible from manual_seed
local mine = ctx:rand(8, "float64", 42):to_table()
local shared = ctx:rand(8, "float64", { seed = 42, shared = true }):to_table()
local root_mine = ctx:broadcast(mine, 0)
local root_shared = ctx:broadcast(shared, 0)
check.same_list(shared, root_shared, "a shared seed gives every rank the same numbers")
if ctx.rank ~= 0 then check.truthy(mine[1] ~= root_mine[1], "per-rank streams differ between ranks") end
ctx:manual_seed(5)
local first = ctx:randn(6):to_table()
ctx:manual_seed(5)
check.same_list(ctx:randn(6):to_table(), first, "manual_seed makes the generator reproducible")
ctx:manual_seed(5, { shared = true })
local gen_shared = ctx:rand(4, "float64"):to_table()
check.same_list(gen_shared, ctx:broadcast(gen_shared, 0), "a shared generator gives every rank the same numbers")

-- argument errors
check.fails("ctx:zeros: size -1 of dimension 1 is not a non-negative integer", function() ctx:zeros(-1) end)
check.fails("ctx:zeros: unknown dtype 'float' (dtypes: bool, int8", function() ctx:zeros(3, "float") end)
check.fails("ctx:zeros: a shape is an integer or a table of integers", function() ctx:zeros("3") end)
check.fails("ctx:zeros: call it on the context with a colon", function() ctx.zeros(3) end)

ctx:barrier()
if ctx.rank == 0 then print("tensor_creation passed on " .. ctx.world_size .. " rank(s)") end
