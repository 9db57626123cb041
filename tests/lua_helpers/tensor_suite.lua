-- The tensor API checks, run twice: straight through host pointers (tensor_api.lua) and through
-- backend copies as GPU backends do (tensor_api_backend_copies.lua).
local ffi = require "ffi"
local check = require "check"

local M = {}

local function round_trips(ctx)
  -- dtype -> { values to write, values expected back }
  local cases = {
    bool = { { true, false, 1, 0 }, { true, false, true, false } },
    int8 = { { -128, 127, 0, -1 } },
    uint8 = { { 0, 255, 7 } },
    int16 = { { -32768, 32767, 12 } },
    int32 = { { -2 ^ 31, 2 ^ 31 - 1, 5 } },
    uint32 = { { 0, 2 ^ 32 - 1, 9 } },
    int64 = { { -2 ^ 63, 2 ^ 53, -2 ^ 53, 3 } },
    uint64 = { { 0, 2 ^ 64 - 2048, 2 ^ 53 } },
    float16 = { { 1.5, -2, 65504, 0.1, 1e5, 2 ^ -24, -0.0 }, { 1.5, -2, 65504, 0.0999755859375, math.huge, 2 ^ -24, 0 } },
    bfloat16 = { { 1, 3.14159, -1e38, 0.1 }, { 1, 3.140625, -9.9692099683868690e37, 0.10009765625 } },
    float32 = { { 0.1, 1e39, -3.5 }, { 0.10000000149011612, math.huge, -3.5 } },
    float64 = { { 0.1, 1e300, -2 ^ -1074 } },
  }
  for _, name in ipairs(iris.dtypes) do
    local case = cases[name]
    local input, expected = case[1], case[2] or case[1]
    -- through ctx:tensor and to_table
    local t = ctx:tensor(input, name)
    check.equal(t.dtype, name, "dtype")
    check.equal(iris[name], name, "iris." .. name)
    check.same_list(t:to_table(), expected, name .. " ctx:tensor round trip")
    -- through set and get, element by element
    local u = ctx:empty(#input, name)
    for i = 1, #input do u:set(i, input[i]) end
    for i = 1, #input do check.equal(u:get(i), expected[i], name .. " get(" .. i .. ")") end
    check.truthy(u:equal(t), name .. " equal")
    -- fill
    u:fill(input[1])
    check.equal(u:min(), expected[1], name .. " fill/min")
    check.equal(u:max(), expected[1], name .. " fill/max")
    check.equal(t:element_size() * t:numel(), t:nbytes(), name .. " nbytes")
    t:free()
    u:free()
  end
  -- 64-bit integers beyond 2^53 are exact when written as cdata
  local big = ctx:zeros(2, "int64")
  big:set(1, 9007199254740993LL)
  big:set(2, -9223372036854775807LL - 1)
  local copy = ctx:empty(2, "int64")
  copy:copy(big)
  local p = ffi.new("int64_t[2]") -- read the raw elements back (a backend copy works on every backend)
  assert(ffi.C.iris_copy_to_host(p, copy:data_ptr(), 16) == 0)
  check.truthy(p[0] == 9007199254740993LL and p[1] == -9223372036854775807LL - 1, "int64 exact beyond 2^53")
  local u64 = ctx:zeros(1, "uint64")
  u64:set(1, 18446744073709551615ULL)
  check.equal(u64:get(1), 2 ^ 64, "uint64 max reads as the nearest double")
  -- element sizes
  local sizes = { bool = 1, int8 = 1, uint8 = 1, int16 = 2, int32 = 4, uint32 = 4, int64 = 8, uint64 = 8, float16 = 2,
    bfloat16 = 2, float32 = 4, float64 = 8 }
  for _, name in ipairs(iris.dtypes) do -- the same order on every rank: creation is collective
    local size = sizes[name]
    check.equal(ctx:zeros(1, name):element_size(), size, name .. " element_size")
  end
  -- conversions between dtypes
  local f = ctx:tensor({ -2.7, -0.5, 0.5, 2.7, 100 }, "float64")
  local i8 = ctx:zeros(5, "int8"):copy(f)
  check.same_list(i8:to_table(), { -2, 0, 0, 2, 100 }, "float64 -> int8 truncates toward zero")
  local h = ctx:zeros(5, "float16"):copy(f)
  check.same_list(h:to_table(), { -2.69921875, -0.5, 0.5, 2.69921875, 100 }, "float64 -> float16 rounds")
  local b = ctx:zeros(5, "bool"):copy(f)
  check.same_list(b:to_table(), { true, true, true, true, true }, "float64 -> bool")
  check.same_list(ctx:zeros(2, "float32"):copy(ctx:tensor({ true, false })):to_table(), { 1, 0 }, "bool -> float32")
  -- refused values
  check.fails("t:set: 300 is not an int8 value (outside int8's range -128 to 127)", function() i8:set(1, 300) end)
  check.fails("t:set: 1.5 is not an int8 value (not a whole number)", function() i8:set(1, 1.5) end)
  check.fails("t:set: 'x' is not a float32 value", function() ctx:zeros(1):set(1, "x") end)
  check.fails("t:set: 2 is not a bool value", function() b:set(1, 2) end)
  check.fails("t:fill: -1 is not a uint8 value", function() ctx:zeros(1, "uint8"):fill(-1) end)
end

local function element_access(ctx)
  local m = ctx:arange(24, "float32"):view({ 2, 3, 4 })
  check.equal(m:get(2, 3, 4), 23, "3-d get")
  m:set(1, 2, 3, -1)
  check.equal(m:get(1, 2, 3), -1, "3-d set")
  check.fails("t:get: a 3-d tensor takes 3 indices, got 2", function() m:get(1, 2) end)
  check.fails("t:get: index 5 is out of range for dimension 3 of size 4 (indices start at 1)", function() m:get(1, 1, 5) end)
  check.fails("t:get: index 1.5 for dimension 1 is not an integer", function() m:get(1.5, 1, 1) end)
  local scalar = ctx:full({}, 4.5)
  check.equal(scalar:dim(), 0, "0-d dim")
  check.equal(scalar:numel(), 1, "0-d numel")
  check.equal(scalar:get(), 4.5, "0-d get")
  scalar:set(2.25)
  check.equal(scalar:get(), 2.25, "0-d set")
  local empty = ctx:zeros({ 3, 0 })
  check.equal(empty:numel(), 0, "0 elements")
  check.equal(empty:sum(), 0, "sum of nothing")
  check.same_list(empty:to_table(), {}, "to_table of nothing")
  check.fails("t:min: the tensor has no elements", function() empty:min() end)
end

local function views(ctx)
  local a = ctx:arange(12)
  local v = a:view({ 3, 4 })
  check.same_list(v:shape(), { 3, 4 }, "view shape")
  v:set(2, 3, 100)
  check.equal(a:get(7), 100, "view writes through to its base")
  check.equal(v:offset(), a:offset(), "view offset")
  check.same_list(a:view({ -1, 6 }):shape(), { 2, 6 }, "view infers -1")
  check.fails("t:view: shape {5} has 5 elements, the tensor has 12", function() a:view(5) end)

  local n = v:narrow(2, 2, 2) -- columns 2 and 3
  check.same_list(n:shape(), { 3, 2 }, "narrow shape")
  check.truthy(not n:is_contiguous(), "narrow of the inner dimension is not contiguous")
  check.same_list(n:stride(), { 4, 1 }, "narrow strides")
  check.equal(n:offset(), a:offset() + 8, "narrow offset")
  check.truthy(ffi.cast("uint8_t*", n:data_ptr()) == ffi.cast("uint8_t*", a:data_ptr()) + 8, "narrow data_ptr")
  check.same_list(n:to_table(), { 1, 2, 5, 100, 9, 10 }, "narrow reads")
  check.equal(n:sum(), 127, "narrow sum")
  n:set(1, 1, -5)
  check.equal(v:get(1, 2), -5, "narrow writes through")
  n:fill(0)
  check.same_list(a:to_table(), { 0, 0, 0, 3, 4, 0, 0, 7, 8, 0, 0, 11 }, "fill of a narrow touches only its elements")
  n:copy(ctx:tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "int64"))
  check.same_list(a:to_table(), { 0, 1, 2, 3, 4, 3, 4, 7, 8, 5, 6, 11 }, "copy into a narrow")
  local c = n:clone()
  check.truthy(c:is_contiguous(), "clone is contiguous")
  check.truthy(c:offset() ~= a:offset(), "clone has its own memory")
  check.same_list(c:to_table(), { 1, 2, 3, 4, 5, 6 }, "clone values")
  check.fails("t:view: this tensor is not contiguous", function() n:view(6) end)
  local nn = n:narrow(1, 2, 2):narrow(2, 2, 1)
  check.same_list(nn:to_table(), { 4, 6 }, "narrow of a narrow")
  check.fails("t:narrow: length 3 from start 2 does not fit dimension 2 of size 2", function() n:narrow(2, 2, 3) end)

  -- a view keeps its base's memory alive after the base is collected
  local kept
  do
    local base = ctx:arange(5)
    kept = base:view({ 5 })
  end
  collectgarbage()
  collectgarbage()
  check.equal(kept:sum(), 10, "a view outlives its collected base")

  -- freeing
  check.fails("t:free: this tensor is a view", function() v:free() end)
  a:free()
  check.truthy(a:is_freed(), "is_freed")
  check.fails("this tensor was freed (t:free() at", function() a:get(1) end)
  check.fails("the tensor this view shares memory with was freed", function() n:sum() end)
  check.fails("t:free: this tensor was freed", function() a:free() end)
  check.equal(tostring(v), "tensor(<freed>)", "tostring of a freed tensor")
  check.fails("t:free: this tensor is iris's own memory", function() ctx:heap_bases():free() end)
  check.fails("read-only", function() ctx:heap_bases():fill(0) end)
end

local function reductions(ctx)
  local x = ctx:tensor({ 3, -1, 4, 1, -5, 9 }, "float64")
  check.equal(x:sum(), 11, "sum")
  check.equal(x:min(), -5, "min")
  check.equal(x:max(), 9, "max")
  local nan = ctx:tensor({ 1, 0 / 0, 3 })
  check.truthy(nan:max() ~= nan:max(), "max propagates NaN")
  check.truthy(not nan:equal(nan), "NaN is not equal to itself")
  check.equal(ctx:tensor({ true, false, true }):sum(), 2, "sum of bools counts trues")
  check.equal(ctx:tensor({ true, false }):max(), true, "max of bools is a bool")
  local a = ctx:tensor({ 1, 2, 3 })
  check.truthy(a:equal(ctx:tensor({ 1, 2, 3 }, "int32")), "equal across dtypes compares values")
  check.truthy(not a:equal(ctx:tensor({ 1, 2 })), "different shapes are not equal")
  check.truthy(a:allclose(ctx:tensor({ 1, 2, 3.00001 })), "allclose within default tolerance")
  check.truthy(not a:allclose(ctx:tensor({ 1, 2, 3.1 })), "allclose outside tolerance")
  check.truthy(a:allclose(ctx:tensor({ 1, 2, 3.1 }), 0, 0.2), "allclose with atol")
  check.fails("t:allclose: shapes differ: {3} and {2}", function() a:allclose(ctx:tensor({ 1, 2 })) end)
  check.fails("t:equal: expected a tensor, got a number", function() a:equal(3) end)
end

local function formatting(ctx)
  check.equal(tostring(ctx:zeros({ 2, 3 })), "tensor([[0., 0., 0.],\n        [0., 0., 0.]])", "2-d zeros")
  check.equal(tostring(ctx:arange(5)), "tensor([0, 1, 2, 3, 4])", "int64 arange")
  check.equal(tostring(ctx:tensor({ 1.5, 2.25 })), "tensor([1.5000, 2.2500])", "fractions")
  check.equal(tostring(ctx:arange(3, "int32")), "tensor([0, 1, 2], dtype=int32)", "dtype shown")
  check.equal(tostring(ctx:tensor({ true, false })), "tensor([ true, false])", "bools")
  check.equal(tostring(ctx:full({}, 3)), "tensor(3.)", "0-d")
  check.equal(tostring(ctx:zeros(0)), "tensor([])", "empty")
  check.equal(tostring(ctx:zeros({ 2, 0 })), "tensor([], size=(2, 0))", "empty 2-d")
  check.equal(tostring(ctx:tensor({ 1e-5, 1 })), "tensor([1.0000e-05, 1.0000e+00])", "scientific")
  check.equal(tostring(ctx:tensor({ 0 / 0, 1 / 0, -1 })), "tensor([nan, inf, -1.])", "non-finite")
  check.equal(tostring(ctx:arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])", "summarised")
  check.equal(tostring(ctx:zeros({ 2, 1, 2 }, "float16")),
    "tensor([[[0., 0.]],\n\n        [[0., 0.]]], dtype=float16)", "3-d")
  local big = tostring(ctx:ones({ 100, 100 }))
  check.truthy(big:find("[1., 1., 1.,  ..., 1., 1., 1.],\n        ...,\n", 1, true), "summarised rows: " .. big)
end

function M.run(ctx)
  round_trips(ctx)
  element_access(ctx)
  views(ctx)
  reductions(ctx)
  formatting(ctx)
end

return M
