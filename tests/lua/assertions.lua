-- iris.assert_equal and iris.assert_allclose: what passes, and the exact message of what fails.
--
-- Tensors are stood in for by a double that keeps the tensor contract the assertions rely on
-- (iris.tensor.is_tensor(v), t.dtype, t:shape(), t:numel(), t:dim(), t:to_table()), so these tests
-- do not depend on the heap.
local ffi = require "ffi"

local this_file = debug.getinfo(1, "S").short_src
local rank = iris.rank()

local Double = {}
Double.__index = Double

local function tensor(dtype, shape, values)
  return setmetatable({ dtype = dtype, dims = shape, values = values }, Double)
end
local function copy(list)
  local out = {}
  for i = 1, #list do out[i] = list[i] end
  return out
end

function Double:shape() return copy(self.dims) end
function Double:dim() return #self.dims end
function Double:numel()
  local n = 1
  for _, d in ipairs(self.dims) do n = n * d end
  return n
end
function Double:to_table() return copy(self.values) end

-- Runs fn with iris.tensor recognizing the doubles (and real tensors, where the module exists).
local function with_doubles(fn)
  local real = package.loaded["iris.tensor"]
  package.loaded["iris.tensor"] = setmetatable({
    is_tensor = function(v) return getmetatable(v) == Double or (real ~= nil and real.is_tensor(v)) end,
  }, { __index = real })
  local ok, err = pcall(fn)
  package.loaded["iris.tensor"] = real
  if not ok then error(err, 0) end
end

-- Checks the message of a failing assertion, without its "file:line: " prefix (the line is checked
-- once, below). The comparison is plain Lua, so that a broken assertion cannot pass its own test.
local function expect_failure(expected_message, assertion, ...)
  local ok, message = pcall(assertion, ...)
  if ok then error("expected this to fail with: " .. expected_message, 2) end
  local prefix = this_file .. ":"
  if message:sub(1, #prefix) ~= prefix then error("the failure is not raised at this file's line: " .. message, 2) end
  local without_prefix = message:sub(#prefix + 1):gsub("^%d+: ", "", 1)
  if without_prefix ~= expected_message then
    error(("wrong message\n  got:      %s\n  expected: %s"):format(without_prefix, expected_message), 2)
  end
end

local function float32(x)
  return tonumber(ffi.new("float[1]", x)[0])
end

local function fails_on(name) return ("%s failed on rank %d: "):format(name, rank) end
local EQ, CLOSE = fails_on("assert_equal"), fails_on("assert_allclose")

iris.test("a failure is raised at the caller's line and names the rank", function()
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, message = pcall(iris.assert_equal, 1, 2)
  assert(not ok, "1 ~= 2 must fail")
  local expected = ("%s:%d: assert_equal failed on rank %d: got 1, expected 2"):format(this_file, line, rank)
  if message ~= expected then error(("got %q, expected %q"):format(message, expected)) end
end)

iris.test("numbers", function()
  iris.assert_equal(3, 3)
  iris.assert_equal(-0.0, 0)
  expect_failure(EQ .. "got 1, expected 2", iris.assert_equal, 1, 2)
  expect_failure(EQ .. "the answer: got 41, expected 42", iris.assert_equal, 41, 42, "the answer")
  expect_failure(EQ .. "got 0.30000000000000004, expected 0.3", iris.assert_equal, 0.1 + 0.2, 0.3)
  expect_failure(EQ .. "got nan, expected nan (NaN never equals NaN; iris.assert_allclose(a, b, {equal_nan = true}) accepts it)",
    iris.assert_equal, 0 / 0, 0 / 0)
  expect_failure(EQ .. "got 5, expected a table of shape [1]", iris.assert_equal, 5, { 5 })
end)

iris.test("other values compare with ==", function()
  iris.assert_equal("abc", "abc")
  iris.assert_equal(nil, nil)
  iris.assert_equal(true, true)
  expect_failure(EQ .. 'got "abc", expected "abd"', iris.assert_equal, "abc", "abd")
  expect_failure(EQ .. "got nil, expected 5", iris.assert_equal, nil, 5)
  expect_failure(EQ .. "got true, expected false", iris.assert_equal, true, false)
  expect_failure(EQ .. 'got "5", expected 5', iris.assert_equal, "5", 5)
end)

iris.test("tables of numbers compare element by element", function()
  iris.assert_equal({ 1, 2, 3 }, { 1, 2, 3 })
  iris.assert_equal({ { 1, 2 }, { 3, 4 } }, { { 1, 2 }, { 3, 4 } })
  iris.assert_equal({}, {})
  iris.assert_equal({ 7, 7, 7 }, 7)
  expect_failure(EQ .. "at [3]: got 4, expected 3 (1 of 3 elements differ)", iris.assert_equal, { 1, 2, 4 }, { 1, 2, 3 })
  expect_failure(EQ .. "at [2, 1]: got 9, expected 3 (2 of 4 elements differ)",
    iris.assert_equal, { { 1, 2 }, { 9, 9 } }, { { 1, 2 }, { 3, 4 } })
  expect_failure(EQ .. "at [2]: got 8, expected 7 (2 of 3 elements differ)", iris.assert_equal, { 7, 8, 9 }, 7)
  expect_failure(EQ .. "shape mismatch: got a table of shape [2], expected a table of shape [3]",
    iris.assert_equal, { 1, 2 }, { 1, 2, 3 })
  expect_failure(EQ .. "shape mismatch: got a table of shape [2, 2], expected a table of shape [4]",
    iris.assert_equal, { { 1, 2 }, { 3, 4 } }, { 1, 2, 3, 4 })
  expect_failure(EQ .. "at [2]: got false, expected true (1 of 2 elements differ)",
    iris.assert_equal, { true, false }, { true, true })
end)

iris.test("other tables compare key by key", function()
  iris.assert_equal({ name = "x", sizes = { 1, 2 } }, { name = "x", sizes = { 1, 2 } })
  expect_failure(EQ .. "at .sizes[2]: got 2, expected 3 (1 of 3 values differ)",
    iris.assert_equal, { name = "x", sizes = { 1, 2 } }, { name = "x", sizes = { 1, 3 } })
  expect_failure(EQ .. "at .extra: got nil, expected 2 (1 of 2 values differ)", iris.assert_equal, { a = 1 }, { a = 1, extra = 2 })
  expect_failure(EQ .. "at [2][1]: got 3, expected 4 (1 of 3 values differ)",
    iris.assert_equal, { { 1, 2 }, { 3 } }, { { 1, 2 }, { 4 } })
  expect_failure(EQ .. "got a table, expected 1", iris.assert_equal, { a = 1 }, 1)
end)

iris.test("allclose follows torch.allclose: |a - b| <= atol + rtol * |b|", function()
  iris.assert_allclose(1.0, 1.0 + 1e-6)
  iris.assert_allclose({ 1, 2 }, { 1, 2.00001 })
  iris.assert_allclose({ 1, 2 }, { 1, 2.0001 }, { rtol = 1e-3 })
  iris.assert_allclose(0, 1e-9)
  iris.assert_allclose(1 / 0, 1 / 0)
  iris.assert_allclose({ 0 / 0, 1 }, { 0 / 0, 1 }, { equal_nan = true })
  expect_failure(CLOSE .. "at [2]: got 2, expected 2.0001 (1 of 2 elements differ; |difference| 0.0001 > 2e-05 allowed by rtol 1e-05, atol 1e-08)",
    iris.assert_allclose, { 1, 2 }, { 1, 2.0001 })
  expect_failure(CLOSE .. "got 1, expected 2 (|difference| 1 > 0.5 allowed by rtol 0, atol 0.5)",
    iris.assert_allclose, 1, 2, { rtol = 0, atol = 0.5 })
  expect_failure(CLOSE .. "halo: got 1, expected 2 (|difference| 1 > 2e-05 allowed by rtol 1e-05, atol 1e-08)",
    iris.assert_allclose, 1, 2, "halo")
  expect_failure(CLOSE .. "halo: got 1, expected 2 (|difference| 1 > 2e-05 allowed by rtol 1e-05, atol 1e-08)",
    iris.assert_allclose, 1, 2, { msg = "halo" })
  expect_failure(CLOSE .. "at [1]: got nan, expected nan (1 of 2 elements differ; NaN never equals NaN; equal_nan = true accepts it)",
    iris.assert_allclose, { 0 / 0, 1 }, { 0 / 0, 1 })
  expect_failure(CLOSE .. "got inf, expected 1e+308 (rtol 1e-05, atol 1e-08)", iris.assert_allclose, 1 / 0, 1e308)
end)

iris.test("allclose refuses options it does not know", function()
  expect_failure("iris.assert_allclose: unknown option 'rtl' (did you mean 'rtol'? options: rtol, atol, equal_nan, msg)",
    iris.assert_allclose, 1, 1, { rtl = 1 })
  expect_failure("iris.assert_allclose: option atol must be 0 or more, got -1", iris.assert_allclose, 1, 1, { atol = -1 })
  expect_failure("iris.assert_allclose: option rtol must be a number, got a string", iris.assert_allclose, 1, 1, { rtol = "big" })
end)

iris.test("tensors against tables, scalars and tensors", function()
  with_doubles(function()
    local t = tensor("float32", { 2, 3 }, { 1, 2, 3, 4, 5, 6 })
    iris.assert_equal(t, { { 1, 2, 3 }, { 4, 5, 6 } })
    iris.assert_equal(t, { 1, 2, 3, 4, 5, 6 }) -- the flat form to_table() gives
    iris.assert_equal(t, tensor("float32", { 2, 3 }, { 1, 2, 3, 4, 5, 6 }))
    iris.assert_allclose(t, { 1, 2, 3, 4, 5, 6.00001 })
    iris.assert_equal(tensor("int32", { 4 }, { 0, 0, 0, 0 }), 0)
    expect_failure(EQ .. "at [2, 2]: got 5, expected 6 (2 of 6 elements differ)",
      iris.assert_equal, t, { { 1, 2, 3 }, { 4, 6, 7 } })
    expect_failure(EQ .. "at [2, 2]: got 5, expected 0 (2 of 6 elements differ)",
      iris.assert_equal, t, { 1, 2, 3, 4, 0, 0 })
    expect_failure(EQ .. "at [1, 2]: got 2, expected 1 (5 of 6 elements differ)", iris.assert_equal, t, 1)
    expect_failure(EQ .. "shape mismatch: got a float32 tensor of shape [2, 3], expected a table of shape [3, 2]",
      iris.assert_equal, t, { { 1, 2 }, { 3, 4 }, { 5, 6 } })
    expect_failure(EQ .. "shape mismatch: got a float32 tensor of shape [2, 3], expected a table of shape [5]",
      iris.assert_equal, t, { 1, 2, 3, 4, 5 })
    expect_failure(EQ .. "dtype mismatch: got float32, expected float64",
      iris.assert_equal, t, tensor("float64", { 2, 3 }, { 1, 2, 3, 4, 5, 6 }))
    expect_failure(EQ .. "shape mismatch: got a float32 tensor of shape [2, 3], expected an int32 tensor of shape [6]; dtype mismatch: got float32, expected int32",
      iris.assert_equal, t, tensor("int32", { 6 }, { 1, 2, 3, 4, 5, 6 }))
    expect_failure(EQ .. "got a float32 tensor of shape [2, 3], expected a table", iris.assert_equal, t, { a = 1 })
  end)
end)

iris.test("tensor elements print at their dtype's precision", function()
  with_doubles(function()
    local point_one = float32(0.1)
    local t = tensor("float32", { 3 }, { 0.5, point_one, 0.25 })
    expect_failure(EQ .. "at [2]: got 0.10000000149011612, expected 0.1 (1 of 3 elements differ)",
      iris.assert_equal, t, { 0.5, 0.1, 0.25 })
    expect_failure(EQ .. "at [2]: got 0.1, expected 0.2 (1 of 3 elements differ)",
      iris.assert_equal, t, { 0.5, 0.2, 0.25 })
    iris.assert_allclose(t, { 0.5, 0.1, 0.25 })
  end)
end)

iris.test("bool tensors compare by truth, 0-d tensors have no index", function()
  with_doubles(function()
    local flags = tensor("bool", { 3 }, { 1, 0, 1 })
    iris.assert_equal(flags, { true, false, true })
    expect_failure(EQ .. "at [3]: got true, expected false (1 of 3 elements differ)",
      iris.assert_equal, flags, { true, false, false })
    local scalar = tensor("int64", {}, { 42 })
    iris.assert_equal(scalar, 42)
    expect_failure(EQ .. "got 42, expected 43", iris.assert_equal, scalar, 43)
  end)
end)

iris.test("a large tensor is compared in one pass and the last element is found", function()
  with_doubles(function()
    local n = 1000000
    local values = {}
    for i = 1, n do values[i] = i end
    local big = tensor("int64", { 1000, 1000 }, values)
    local copy = {}
    for i = 1, n do copy[i] = i end
    iris.assert_equal(big, copy)
    copy[n] = 0
    expect_failure(EQ .. "at [1000, 1000]: got 1000000, expected 0 (1 of 1000000 elements differ)",
      iris.assert_equal, big, copy)
  end)
end)
