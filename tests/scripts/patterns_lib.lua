-- scripts/lib/patterns.lua, the pattern scripts' shared module: its checks catch wrong data and say
-- where, its Lua pattern is the device's, and its options read values and refuse bad ones.
package.path = arg[0]:match("^(.*/)") .. "../../scripts/lib/?.lua;" .. package.path
local patterns = require "patterns"
local errors = require "iris.errors"

local ctx = iris.init {}
local mod = iris.compile(patterns.source("float16", "__global__ void unused() {}"))
local check = patterns.checker(ctx, mod)

-- The error `fn` raises (it must raise one).
local function failure(fn)
  local ok, message = pcall(fn)
  if ok then error("expected an error, got none", 2) end
  return message
end

local function contains(text, plain)
  if not text:find(plain, 1, true) then error(("%q does not contain %q"):format(text, plain), 2) end
end

iris.test("the Lua pattern is the one the device writes", function()
  local t = ctx:zeros(1000, "float16")
  patterns.fill(mod, t, 1, 3)
  local expected = {}
  for i = 0, 999 do expected[i + 1] = patterns.pattern(1, 3, i) end
  iris.assert_equal(t, expected)
  -- Ranks and rounds differ, so a stale or misrouted message does not pass for the right one.
  iris.assert_equal(patterns.pattern(0, 0, 5) ~= patterns.pattern(1, 0, 5), true)
  iris.assert_equal(patterns.pattern(0, 0, 5) ~= patterns.pattern(0, 1, 5), true)
end)

iris.test("a check passes every right element and names the first wrong one", function()
  local t = ctx:zeros(1000, "float16")
  patterns.fill(mod, t, 1)
  check(t, { rank = 1 }, "rank 1's data")
  t:set(18, 0)
  t:set(900, 7)
  local message = failure(function() check(t, { rank = 1 }, "rank 1's data") end)
  contains(message, ("assert_equal failed on rank %d: rank 1's data: element [18] of 1000 (2 elements differ): "
    .. "got 0, expected %d"):format(ctx.rank, patterns.pattern(1, 0, 17)))
  -- The pattern of another rank is not this one.
  contains(failure(function() check(t, { rank = 0 }, "rank 0's data") end), "element [1] of 1000")
end)

iris.test("a value check counts every element", function()
  local t = ctx:full(4099, 5, "float16")
  check(t, { value = 5 }, "fives")
  t:set(4099, 6)
  contains(failure(function() check(t, { value = 5 }, "fives") end),
    "fives: element [4099] of 4099 (1 elements differ): got 6, expected 5")
end)

local spec = {
  name = "example", about = "an example",
  dtypes = { "int8", "float32", "float64" },
  methods = { block = "whole blocks", element = "one by one" },
  defaults = {
    cpu = { size = "4KiB", dtype = "float32", method = "block", iters = 3, warmup = 1, grid = 8, block = 64 },
    gpu = { size = "1GiB", dtype = "float32", method = "block", iters = 10, warmup = 2, grid = 1056, block = 512 },
  },
}

iris.test("options take their defaults, both spellings of a value, and --no-validate", function()
  local defaults = patterns.options({}, spec)
  local expected = patterns.expects_gpu() and spec.defaults.gpu or spec.defaults.cpu
  iris.assert_equal({ defaults.size, defaults.iters, defaults.grid, defaults.validate },
    { patterns.expects_gpu() and 2 ^ 30 or 4096, expected.iters, expected.grid, true }) -- sizes in bytes
  iris.assert_equal({ defaults.csv, defaults.json }, { nil, nil })
  local files = patterns.options({ "--csv", "out.csv", "--json=out.json" }, spec)
  iris.assert_equal({ files.csv, files.json }, { "out.csv", "out.json" })
  local opts = patterns.options({ "--size=1000", "--dtype", "int8", "--iters", "4", "--method=element", "--no-validate" },
    spec)
  iris.assert_equal({ opts.bytes, opts.elements, opts.element_size, opts.ctype, opts.iters, opts.method, opts.validate },
    { 1000, 1000, 1, "int8_t", 4, "element", false })
  -- Sizes round down to whole elements.
  iris.assert_equal(patterns.options({ "--size", "1001", "--dtype", "float64" }, spec).bytes, 1000)
  iris.assert_equal(patterns.options({ "--help" }, spec), nil)
end)

iris.test("patterns.pairs goes row by row, with or without a rank and itself", function()
  local function all(world, others_only)
    local list = {}
    for row, column in patterns.pairs(world, others_only) do list[#list + 1] = row .. ">" .. column end
    return table.concat(list, " ")
  end
  iris.assert_equal(all(2), "0>0 0>1 1>0 1>1")
  iris.assert_equal(all(3, true), "0>1 0>2 1>0 1>2 2>0 2>1")
  iris.assert_equal(all(1, true), "")
end)

iris.test("a bad option is a usage error (exit code 2) that names it", function()
  -- Every rank parses the same options; rank 0 reports a bad one, the others wait for the job to end
  -- (tests/scripts/CMakeLists.txt checks that at 2 ranks).
  if ctx.rank ~= 0 then return end
  local cases = {
    { { "--sise", "3" }, "unknown option '--sise'" },
    { { "--iters", "0" }, "--iters takes a whole number >= 1, got '0'" },
    { { "--block", "2048" }, "--block takes a whole number from 1 to 1024, got '2048'" },
    { { "--dtype", "bool" }, "--dtype 'bool' is not one of int8, float32, float64" },
    { { "--method", "warp" }, "--method 'warp' is not one of block, element" },
    { { "--size", "lots" }, "cannot read 'lots' as a size" },
    { { "--size", "4", "--dtype", "float64" }, "--size 4 holds no float64 element (8 bytes each)" },
    { { "--size" }, "--size needs a value" },
    { { "--no-validate=yes" }, "--no-validate takes no value" },
  }
  for _, case in ipairs(cases) do
    local message = failure(function() patterns.options(case[1], spec) end)
    contains(message, case[2])
    iris.assert_equal(errors.exit_code(message), 2, message)
  end
end)
