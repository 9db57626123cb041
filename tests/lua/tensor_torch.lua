-- Tensors as torch users write them (issue 13): t[i] and t[{i, j}] (1-based) read and write, other keys
-- refused, #t, size, reshape, item, mean, transposes as strided views that every method copes with,
-- in-place arithmetic on the device (scalars, tensors, broadcasting, views, every number dtype) that
-- allocates nothing, copy_, iris.manual_seed. The element paths run twice: through host pointers and
-- through backend copies (the GPU backends' way).
local ctx = iris.init { heap_size = "32MiB" }
local tensor = require "iris.tensor"

local function fails(pattern, fn)
  local ok, message = pcall(fn)
  assert(not ok, "no error; expected: " .. pattern)
  assert(tostring(message):find(pattern, 1, true), "error\n  " .. tostring(message) .. "\ndoes not contain\n  " .. pattern)
end

local function allocated() return ctx:memory_stats().allocated end

local function both_paths(name, fn)
  iris.test(name, function()
    fn()
    tensor.use_backend_copies(true)
    local ok, err = pcall(fn)
    tensor.use_backend_copies(false)
    if not ok then error("with backend copies: " .. tostring(err), 0) end
  end)
end

both_paths("t[i] reads and writes the elements of a 1-D tensor, 1-based", function()
  local t = ctx:zeros(3)
  t[1] = 5
  t[3] = -2.5
  iris.assert_equal(t[1], 5)
  iris.assert_equal(t[2], 0)
  iris.assert_equal(t, { 5, 0, -2.5 })
  iris.assert_equal(#t, 3)
  fails("t[i]: index 0 is out of range for dimension 1 of size 3 (indices start at 1)", function() return t[0] end)
  fails("index 4 is out of range", function() t[4] = 1 end)
  fails("t[i] = v: 300 is not an int8 value", function() ctx:zeros(2, "int8")[1] = 300 end)
end)

both_paths("t[{i, j}] reads and writes elements; t[i] of a matrix is its row, a view", function()
  local m = ctx:arange(6, "int32"):view { 2, 3 }
  iris.assert_equal(m[{ 2, 3 }], 5)
  m[{ 1, 2 }] = 42
  iris.assert_equal(m:get(1, 2), 42)
  local row = m[2]
  iris.assert_equal(row:shape(), { 3 })
  iris.assert_equal(row, { 3, 4, 5 })
  row[1] = 7 -- a view: the matrix sees it
  iris.assert_equal(m[{ 2, 1 }], 7)
  m[1] = 9 -- a number fills the row
  iris.assert_equal(m, { { 9, 9, 9 }, { 7, 4, 5 } })
  m[{ 2 }] = { 1, 2, 3 } -- a table (or tensor) is copied into it
  iris.assert_equal(m, { { 9, 9, 9 }, { 1, 2, 3 } })
  iris.assert_equal(#m, 2)
  fails("a 2-d tensor takes 2 indices, got 3", function() return m[{ 1, 1, 1 }] end)
  fails("an element takes a number or boolean, got a table", function() m[{ 1, 1 }] = { 1 } end)
  local scalar = ctx:full({}, 3)
  fails("a 0-d tensor has no index (t:item() reads its value)", function() return scalar[1] end)
  fails("#t: a 0-d tensor has no length", function() return #scalar end)
  iris.assert_equal(scalar:item(), 3)
end)

iris.test("keys that are not elements are refused; fields and methods read as before", function()
  local t = ctx:zeros(2)
  fails("t.foo = ...: a tensor has no field 'foo' to set; its elements are t[i] (1-D) and t[{i, j}] (n-D), 1-based",
    function() t.foo = 1 end)
  fails("a tensor has no field 'dtype' to set", function() t.dtype = "int8" end)
  fails("tensors have no arithmetic operators", function() return t + 1 end)
  iris.assert_equal(t.foo, nil)
  iris.assert_equal(t.dtype, "float32")
  iris.assert_equal(type(t.numel), "function")
  iris.assert_equal(tensor.is_tensor(t), true)
  iris.assert_equal(tensor.is_tensor({}), false)
  iris.assert_equal(tensor.is_tensor("float32"), false)
  fails("t[i] = v: this tensor is iris's own memory and is read-only", function() ctx:heap_bases()[1] = 5 end)
end)

iris.test("size, item, mean", function()
  local m = ctx:ones({ 2, 3, 4 })
  iris.assert_equal(m:size(), { 2, 3, 4 })
  iris.assert_equal(m:size(2), 3)
  iris.assert_equal(m:size(-1), 4)
  fails("t:size: dim 4 is not a dimension of this 3-d tensor", function() return m:size(4) end)
  iris.assert_equal(ctx:tensor({ { 7 } }):item(), 7)
  fails("t:item: the tensor has 24 elements", function() return m:item() end)
  iris.assert_equal(ctx:tensor({ 1, 2, 3, 4 }, "int64"):mean(), 2.5)
  local empty = ctx:zeros(0)
  assert(empty:mean() ~= empty:mean(), "the mean of no elements is NaN")
  fails("t:mean: a bool tensor has no mean", function() return ctx:ones(2, "bool"):mean() end)
end)

both_paths("transposes are strided views, and every method copes with them or refuses clearly", function()
  local m = ctx:arange(6, "float64"):view { 2, 3 }
  local mt = m:t()
  iris.assert_equal(mt:shape(), { 3, 2 })
  iris.assert_equal(mt:stride(), { 1, 3 })
  iris.assert_equal(mt:is_contiguous(), false)
  iris.assert_equal(mt:offset(), m:offset())
  iris.assert_equal(mt, { { 0, 3 }, { 1, 4 }, { 2, 5 } })
  iris.assert_equal(m:transpose(1, 2):equal(mt), true)
  iris.assert_equal(m:transpose(-1, -2):equal(mt), true)
  mt[{ 3, 1 }] = 20 -- the base sees writes through the view
  iris.assert_equal(m[{ 1, 3 }], 20)
  iris.assert_equal(mt:get(3, 1), 20)
  mt:set(1, 2, 30)
  iris.assert_equal(m[{ 2, 1 }], 30)
  iris.assert_equal(mt:to_table(), { 0, 30, 1, 4, 20, 5 })
  iris.assert_equal(mt:sum(), 60)
  iris.assert_equal(mt:min(), 0)
  iris.assert_equal(mt:max(), 30)
  iris.assert_equal(mt:mean(), 10)
  iris.assert_equal(mt:allclose(ctx:tensor({ { 0, 30 }, { 1, 4 }, { 20, 5 } }, "float64")), true)
  assert(tostring(mt):find("[[ 0., 30.]", 1, true), tostring(mt))
  local copy = mt:clone()
  iris.assert_equal(copy:is_contiguous(), true)
  iris.assert_equal(copy, mt:to_table())
  mt:narrow(1, 2, 2):fill(-1)
  iris.assert_equal(m, { { 0, -1, -1 }, { 30, -1, -1 } })
  mt:copy(ctx:tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float64"))
  iris.assert_equal(m, { { 1, 3, 5 }, { 2, 4, 6 } })
  mt:copy_({ 6, 5, 4, 3, 2, 1 })
  iris.assert_equal(mt, { { 6, 5 }, { 4, 3 }, { 2, 1 } })
  fails("t:view: this tensor is not contiguous (a narrow or transpose of another)", function() return mt:view(6) end)
  fails("t:free: this tensor is a view", function() mt:free() end)
  iris.assert_equal(mt:t():equal(m), true)
  iris.assert_equal(ctx:zeros(4):t():shape(), { 4 })
  fails("t:t: transposes a matrix, this tensor has 3 dimensions", function() return ctx:zeros({ 1, 2, 3 }):t() end)
  iris.assert_equal(m:select(2, 3), { 2, 1 }) -- column 3
end)

iris.test("reshape is a view of a contiguous tensor, a collective copy of another", function()
  local t = ctx:arange(6, "int32")
  local before = allocated()
  local r = t:reshape { 3, 2 }
  iris.assert_equal(allocated(), before)
  r[{ 1, 1 }] = 100
  iris.assert_equal(t[1], 100)
  local copy = r:t():reshape(6) -- not contiguous: copied
  iris.assert_equal(copy, { 100, 2, 4, 1, 3, 5 })
  copy[1] = 0
  iris.assert_equal(t[1], 100)
end)

iris.test("view and reshape take the sizes as separate arguments, as torch, and errors name the method called", function()
  local t = ctx:arange(6, "int32")
  iris.assert_equal(t:view(2, 3):shape(), { 2, 3 })
  iris.assert_equal(t:view(3, -1):shape(), { 3, 2 })
  iris.assert_equal(t:view(-1, 1, 2):shape(), { 3, 1, 2 })
  iris.assert_equal(t:reshape(2, 3):shape(), { 2, 3 })
  iris.assert_equal(t:reshape(-1, 2):shape(), { 3, 2 })
  iris.assert_equal(t:view(2, 3):t():reshape(3, 2), { { 0, 3 }, { 1, 4 }, { 2, 5 } }) -- not contiguous: copied
  fails("t:reshape: shape {4, 2} has 8 elements, the tensor has 6", function() return t:reshape(4, 2) end)
  fails("t:reshape: only one size may be -1, got {-1, -1}", function() return t:reshape(-1, -1) end)
  fails("t:reshape: 6 elements cannot take the shape {4, -1}", function() return t:reshape(4, -1) end)
  fails("t:view: shape {3, 3} has 9 elements, the tensor has 6", function() return t:view(3, 3) end)
  fails("t:view(shape): needs a shape", function() return t:view() end)
  fails("t:reshape: size x of dimension 2 is not a non-negative integer", function() return t:reshape(2, "x") end)
  fails("t:view: a shape is one table such as {2, 3} or sizes such as 2, 3", function() return t:view({ 2 }, 3) end)
  local before = allocated()
  fails("t:reshape: shape {4} has 4 elements", function() return t:view(2, 3):t():reshape(4) end)
  iris.assert_equal(allocated(), before) -- a wrong shape copies nothing
end)

iris.test("add_, sub_, mul_, div_ with a scalar, on the device, without allocating", function()
  local t = ctx:arange(5, "float32")
  local before = allocated()
  iris.assert_equal(t:add_(1), t) -- returns the tensor
  t:mul_(2):sub_(1):div_(2)
  iris.assert_equal(allocated(), before)
  iris.assert_allclose(t, { 0.5, 1.5, 2.5, 3.5, 4.5 })
  for _, dtype in ipairs { "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
    "float64" } do
    local x = ctx:full(3, 6, dtype)
    x:add_(2):mul_(3):sub_(4)
    iris.assert_equal(x, { 20, 20, 20 }, dtype)
  end
  iris.assert_equal(ctx:zeros(2, "uint8"):add_(-1), { 255, 255 }) -- wraps, as torch's
  iris.assert_equal(ctx:full(2, 1, "uint8"):sub_(-2), { 3, 3 })
  fails("t:div_: true division of an int32 tensor", function() ctx:ones(2, "int32"):div_(2) end)
  fails("t:add_: 1.5 is not an int32 value", function() ctx:ones(2, "int32"):add_(1.5) end)
  fails("t:add_: a bool tensor has no arithmetic", function() ctx:ones(2, "bool"):add_(1) end)
  fails("t:mul_(x): x is a number or a tensor, got a string", function() t:mul_("2") end)
  fails("t:add_: this tensor is iris's own memory and is read-only", function() ctx:heap_bases():add_(1) end)
end)

iris.test("add_ and friends with a tensor: same shape, broadcast, and strided views on both sides", function()
  local m = ctx:arange(6, "float64"):view { 2, 3 }
  local before = allocated()
  m:add_(ctx:full({ 2, 3 }, 10, "float64"))
  iris.assert_equal(m, { { 10, 11, 12 }, { 13, 14, 15 } })
  local column = ctx:tensor({ { 1 }, { 2 } }, "float64")
  local row = ctx:tensor({ 100, 200, 300 }, "float64")
  before = allocated()
  m:mul_(column) -- {2, 1} broadcasts along the rows
  m:sub_(row) -- {3} broadcasts along the columns
  iris.assert_equal(allocated(), before)
  iris.assert_equal(m, { { -90, -189, -288 }, { -74, -172, -270 } })
  local mt = m:t() -- a transposed destination and a transposed source
  mt:add_(m:t())
  iris.assert_equal(m, { { -180, -378, -576 }, { -148, -344, -540 } })
  local half = m:narrow(2, 2, 2)
  half:div_(ctx:full({ 2, 2 }, -2, "float64"))
  iris.assert_equal(m, { { -180, 189, 288 }, { -148, 172, 270 } })
  local cube = ctx:ones({ 2, 3, 4, 5, 2 }, "float32")
  cube:narrow(5, 1, 1):mul_(3) -- strided in every dimension: merged to four
  iris.assert_equal(cube:sum(), 2 * 3 * 4 * 5 * 4)
  fails("t:add_: the other tensor is float32, this one float64", function() m:add_(ctx:zeros({ 2, 3 })) end)
  fails("shape {3, 2} does not broadcast to this tensor's {2, 3}", function() m:add_(mt:clone()) end)
  fails("the other tensor has 3 dimensions, this one 2", function() m:add_(ctx:zeros({ 1, 2, 3 }, "float64")) end)
end)

-- A run of elements takes 16 bytes a step where both tensors start 16-byte aligned (kernels/tensor/
-- elementwise.hip): every dtype's whole steps and its leftover elements, a start one element off (the
-- general loop) and a scalar, each element checked.
iris.test("add_ and friends on long runs: 16-byte steps, the leftover elements, an unaligned start", function()
  local n = 203 -- not a multiple of any step (2 to 16 elements)
  for _, dtype in ipairs { "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
    "float32", "float64" } do
    local start = {}
    for i = 1, n do start[i] = (i - 1) % 50 end
    local x, y = ctx:tensor(start, dtype), ctx:full(n, 3, dtype)
    x:add_(y):mul_(2) -- aligned: the 16-byte steps, then the tail
    local want = {}
    for i = 1, n do want[i] = ((i - 1) % 50 + 3) * 2 end
    iris.assert_equal(x, want, dtype)
    local tail = x:narrow(1, 2, n - 1) -- one element in: not 16-byte aligned
    tail:sub_(y:narrow(1, 2, n - 1))
    for i = 2, n do want[i] = want[i] - 3 end
    iris.assert_equal(x, want, dtype .. ", unaligned")
  end
end)

iris.test("every rank changes its own copy (not collective)", function()
  local t = ctx:full(4, ctx.rank, "int32")
  if ctx.rank % 2 == 0 then t:add_(10) end
  iris.assert_equal(t, ctx.rank % 2 == 0 and ctx.rank + 10 or ctx.rank)
end)

iris.test("iris.manual_seed seeds the context's generator as ctx:manual_seed does", function()
  iris.manual_seed(123)
  local a = ctx:rand(8):to_table()
  ctx:manual_seed(123)
  iris.assert_equal(ctx:rand(8):to_table(), a)
  iris.manual_seed(9, { shared = true })
  local mine = ctx:randint(0, 1000000, 4)
  local rank0 = ctx:broadcast(mine:to_table(), 0)
  iris.assert_equal(mine:to_table(), rank0)
  fails("iris.manual_seed: a seed is a whole number >= 0, got -1", function() iris.manual_seed(-1) end)
end)
