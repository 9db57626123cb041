-- ctx.ccl.all_reduce against a reference computed in Lua: every variant x dtype x op, odd sizes (1, 7,
-- not a multiple of a tile, 2-d views), in place, back-to-back calls on the same buffers without
-- barriers, async calls ordered by a barrier.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"

local ctx = iris.init { heap_size = "16MiB" }
local W = ctx.world_size
local VARIANTS = { "one_shot", "two_shot", "ring", "atomic", "spinlock" }

-- A 1-d tensor of n elements, or a 2-d window when shape is {rows, cols}.
local function make(shape, dtype)
  if type(shape) == "table" then return ref.window(ctx, shape[1], shape[2], dtype) end
  return ctx:zeros(shape, dtype)
end

local function run(variant, dtype, op, shape, opts)
  local inp, out = make(shape, dtype), make(shape, dtype)
  ref.fill(inp, function(i) return ref.value(dtype, op, ctx.rank, i) end)
  local options = { variant = variant, op = op }
  for k, v in pairs(opts or {}) do options[k] = v end
  local returned = ctx.ccl.all_reduce(out, inp, options)
  assert(returned == out, "all_reduce returns its output tensor")
  ref.check(ctx, out, function(i)
    local values = {}
    for r = 0, W - 1 do values[#values + 1] = ref.value(dtype, op, r, i) end
    return ref.as_read(dtype, ref.reduce(dtype, op, values))
  end, ("%s %s %s %s"):format(variant, dtype, op, type(shape) == "table" and shape[1] .. "x" .. shape[2] or shape))
  -- the input is untouched
  ref.check(ctx, inp, function(i) return ref.as_read(dtype, ref.value(dtype, op, ctx.rank, i)) end, "input after the call")
end

for _, variant in ipairs(VARIANTS) do
  iris.test(variant .. ": every dtype, sum, 1000 elements", function()
    for _, dtype in ipairs(ref.dtypes) do run(variant, dtype, "sum", 1000) end
  end)

  iris.test(variant .. ": every op of int32, uint8, float32, bfloat16 and bool, sizes 1, 7 and 2-d", function()
    for _, dtype in ipairs { "int32", "uint8", "float32", "bfloat16", "bool" } do
      for _, op in ipairs(ref.ops_for(dtype)) do
        for _, shape in ipairs { 1, 7, { 5, 13 } } do run(variant, dtype, op, shape) end
      end
    end
  end)

  iris.test(variant .. ": several tiles and blocks, odd tile shapes", function()
    run(variant, "float32", "sum", 5001) -- 3 tiles of 2048, the last short
    run(variant, "int64", "max", 777, { block_m = 4, block_n = 8, blocks = 3 })
    run(variant, "float16", "sum", { 37, 45 }, { block_m = 8, block_n = 16, blocks = 5 })
    run(variant, "int8", "min", { 9, 33 }, { block_m = 2, block_n = 17 })
  end)

  iris.test(variant .. ": in place", function()
    for _, case in ipairs { { "float32", "sum", 2500 }, { "int16", "max", { 7, 19 } }, { "bool", "bxor", 33 } } do
      local dtype, op, shape = case[1], case[2], case[3]
      local t = make(shape, dtype)
      ref.fill(t, function(i) return ref.value(dtype, op, ctx.rank, i) end)
      ctx.ccl.all_reduce(t, t, { variant = variant, op = op })
      ref.check(ctx, t, function(i)
        local values = {}
        for r = 0, W - 1 do values[#values + 1] = ref.value(dtype, op, r, i) end
        return ref.as_read(dtype, ref.reduce(dtype, op, values))
      end, variant .. " in place " .. dtype)
    end
  end)
end

iris.test("back-to-back calls on the same buffers, no barrier between them", function()
  -- x := W * x, ten times over, every variant in turn, in place and out of place.
  local x = ctx:zeros(3000, "float64")
  local y = ctx:zeros(3000, "float64")
  ref.fill(x, function(i) return (i % 7) + ctx.rank end)
  local base = {}
  for i = 0, 2999 do
    local s = 0
    for r = 0, W - 1 do s = s + (i % 7) + r end
    base[i] = s
  end
  for round = 1, 10 do
    local variant = VARIANTS[(round - 1) % #VARIANTS + 1]
    if round % 2 == 1 then
      ctx.ccl.all_reduce(x, x, { variant = variant })
    else
      ctx.ccl.all_reduce(y, x, { variant = variant })
      ctx.ccl.all_reduce(x, y, { variant = variant, op = "max" }) -- every rank holds the same: max is y
    end
  end
  -- Five in-place sums (each multiplies by W after the first) and five sum+max pairs.
  local factor = W ^ 9
  ref.check(ctx, x, function(i) return base[i] * factor end, "after ten rounds")
end)

iris.test("async calls, then a barrier", function()
  local inp, out = ctx:zeros(4000, "int32"), ctx:zeros(4000, "int32")
  for round = 1, 3 do
    ref.fill(inp, function(i) return ref.value("int32", "sum", ctx.rank, i, round) end)
    for _, variant in ipairs { "one_shot", "ring", "two_shot" } do
      ctx.ccl.all_reduce(out, inp, { variant = variant, async = true })
      ref.check(ctx, out, function(i)
        local values = {}
        for r = 0, W - 1 do values[#values + 1] = ref.value("int32", "sum", r, i, round) end
        return ref.reduce("int32", "sum", values)
      end, "async " .. variant)
    end
    ctx:barrier() -- the peers are done reading inp: it may change
  end
end)

iris.test("empty tensors and a 3-d contiguous tensor", function()
  local e = ctx:zeros(0, "float32")
  assert(ctx.ccl.all_reduce(e, e) == e)
  local cube = ctx:zeros({ 3, 4, 5 }, "int32")
  ref.fill(cube:view(60), function(i) return i + ctx.rank end)
  ctx.ccl.all_reduce(cube, cube)
  local flat = cube:view(60)
  ref.check(ctx, flat, function(i) return W * i + W * (W - 1) / 2 end, "3-d")
end)
