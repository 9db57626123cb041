-- ctx.ccl.all_gather, reduce_scatter, all_to_all and broadcast against references computed in Lua:
-- variants, dtypes, dim 1 and 2, odd sizes, views, in place where allowed, several calls in a row.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank

-- The logical index of (row r, column c) (0-based) in a rows x cols tensor, and back.
local function at(r, c, cols) return r * cols + c end

-- 1-d shapes are numbers, 2-d ones {rows, cols}; `window`: a non-contiguous view of that shape.
local function make(shape, dtype, window)
  if type(shape) == "number" then return ctx:zeros(shape, dtype) end
  if window then return ref.window(ctx, shape[1], shape[2], dtype) end
  return ctx:zeros(shape, dtype)
end

local function input(dtype, rank, i) return ref.value(dtype, "sum", rank, i, 3) end

-- ---- all_gather -----------------------------------------------------------------------------------

-- out[chunk q along dim] = rank q's inp.
local function gather_expected(dtype, shape, dim)
  if type(shape) == "number" then
    return function(i) return ref.as_read(dtype, input(dtype, math.floor(i / shape), i % shape)) end
  end
  local rows, cols = shape[1], shape[2]
  return function(i)
    local ocols = dim == 2 and cols * W or cols
    local r, c = math.floor(i / ocols), i % ocols
    local q = dim == 1 and math.floor(r / rows) or math.floor(c / cols)
    local ir, ic = dim == 1 and r % rows or r, dim == 2 and c % cols or c
    return ref.as_read(dtype, input(dtype, q, at(ir, ic, cols)))
  end
end

local function gather_shape(shape, dim)
  if type(shape) == "number" then return shape * W end
  return dim == 1 and { shape[1] * W, shape[2] } or { shape[1], shape[2] * W }
end

for _, variant in ipairs { "persistent", "partitioned" } do
  iris.test("all_gather " .. variant .. ": dtypes, sizes, dim 1 and 2, views", function()
    for _, dtype in ipairs(ref.dtypes) do
      for _, case in ipairs { { 1, 1 }, { 7, 1 }, { 3000, 1 }, { { 5, 9 }, 1 }, { { 6, 11 }, 2 } } do
        local shape, dim = case[1], case[2]
        local window = type(shape) == "table" and dtype ~= "int32"
        local inp = make(shape, dtype, window)
        local out = make(gather_shape(shape, dim), dtype, window)
        ref.fill(inp, function(i) return input(dtype, me, i) end)
        assert(ctx.ccl.all_gather(out, inp, { variant = variant, dim = dim, blocks = 3 }) == out)
        ref.check(ctx, out, gather_expected(dtype, shape, dim), ("all_gather %s %s dim %d"):format(variant, dtype, dim))
      end
    end
  end)
end

iris.test("all_gather in place: inp is this rank's chunk of out", function()
  local n = 1500
  local out = ctx:zeros(n * W, "float32")
  local mine = out:narrow(1, me * n + 1, n)
  ref.fill(mine, function(i) return input("float32", me, i) end)
  ctx.ccl.all_gather(out, mine)
  ref.check(ctx, out, gather_expected("float32", n, 1), "in place")
end)

-- ---- reduce_scatter --------------------------------------------------------------------------------

iris.test("reduce_scatter: every op, dtypes, dim 1 and 2, views", function()
  for _, dtype in ipairs { "int32", "uint8", "float32", "float16", "bool", "int64", "float64" } do
    for _, op in ipairs(ref.ops_for(dtype)) do
      for _, case in ipairs { { 1, 1 }, { 513, 1 }, { { 3, 7 }, 1 }, { { 4, 5 }, 2 } } do
        local shape, dim = case[1], case[2]
        local window = type(shape) == "table"
        local inp = make(gather_shape(shape, dim), dtype, window)
        local out = make(shape, dtype, window)
        ref.fill(inp, function(i) return ref.value(dtype, op, me, i) end)
        ctx.ccl.reduce_scatter(out, inp, { op = op, dim = dim })
        -- out[j] = op over ranks of element j of chunk `me` of their inp.
        local rows, cols = type(shape) == "table" and shape[1] or 1, type(shape) == "table" and shape[2] or shape
        ref.check(ctx, out, function(j)
          local r, c = math.floor(j / cols), j % cols
          local index
          if type(shape) == "number" then
            index = me * shape + j
          elseif dim == 1 then
            index = at(me * rows + r, c, cols)
          else
            index = at(r, me * cols + c, cols * W)
          end
          local values = {}
          for q = 0, W - 1 do values[#values + 1] = ref.value(dtype, op, q, index) end
          return ref.as_read(dtype, ref.reduce(dtype, op, values))
        end, ("reduce_scatter %s %s dim %d"):format(dtype, op, dim))
      end
    end
  end
end)

iris.test("reduce_scatter in place: out is this rank's chunk of inp", function()
  local n = 999
  local inp = ctx:zeros(n * W, "int32")
  ref.fill(inp, function(i) return input("int32", me, i) end)
  local mine = inp:narrow(1, me * n + 1, n)
  ctx.ccl.reduce_scatter(mine, inp)
  ref.check(ctx, mine, function(j)
    local s = 0
    for q = 0, W - 1 do s = s + input("int32", q, me * n + j) end
    return s
  end, "in place")
end)

-- ---- all_to_all ----------------------------------------------------------------------------------------

iris.test("all_to_all: dtypes, sizes, dim 1 and 2, views", function()
  for _, dtype in ipairs(ref.dtypes) do
    for _, case in ipairs { { W, 1 }, { 7 * W, 1 }, { { 2 * W, 9 }, 1 }, { { 5, 3 * W }, 2 } } do
      local shape, dim = case[1], case[2]
      local window = type(shape) == "table" and dtype ~= "float32"
      local inp, out = make(shape, dtype, window), make(shape, dtype, window)
      ref.fill(inp, function(i) return input(dtype, me, i) end)
      ctx.ccl.all_to_all(out, inp, { dim = dim })
      -- chunk q of my out is chunk `me` of rank q's inp.
      ref.check(ctx, out, function(i)
        if type(shape) == "number" then
          local n = shape / W
          local q, k = math.floor(i / n), i % n
          return ref.as_read(dtype, input(dtype, q, me * n + k))
        end
        local rows, cols = shape[1], shape[2]
        local r, c = math.floor(i / cols), i % cols
        if dim == 1 then
          local n = rows / W
          local q = math.floor(r / n)
          return ref.as_read(dtype, input(dtype, q, at(me * n + r % n, c, cols)))
        end
        local n = cols / W
        local q = math.floor(c / n)
        return ref.as_read(dtype, input(dtype, q, at(r, me * n + c % n, cols)))
      end, ("all_to_all %s dim %d"):format(dtype, dim))
    end
  end
end)

-- ---- broadcast ----------------------------------------------------------------------------------------

iris.test("broadcast: every root, dtypes, 1-d and a 2-d view", function()
  for root = 0, W - 1 do
    for _, dtype in ipairs { "bool", "int8", "float16", "int32", "float64", "uint64" } do
      for _, shape in ipairs { 1, 2049, { 6, 7 } } do
        local t = make(shape, dtype, true)
        ref.fill(t, function(i) return input(dtype, me, i) end)
        assert(ctx.ccl.broadcast(t, root) == t)
        ref.check(ctx, t, function(i) return ref.as_read(dtype, input(dtype, root, i)) end,
          ("broadcast %s from %d"):format(dtype, root))
      end
    end
  end
end)

iris.test("every collective in a row on the same buffers, no barrier between them", function()
  local n = 300
  local a = ctx:zeros(n * W, "float32")
  local b = ctx:zeros(n, "float32")
  for round = 1, 4 do
    ref.fill(b, function(i) return me + i + round end)
    ctx.ccl.all_gather(a, b)           -- a = [b_0 ... b_{W-1}]
    ctx.ccl.reduce_scatter(b, a)       -- b = W * b_me (every rank's a is the same)
    ctx.ccl.all_reduce(a, a)           -- a = W * [b_0 ...]
    ctx.ccl.broadcast(b, W - 1)        -- b = W * b_{W-1}
    ref.check(ctx, b, function(i) return W * (W - 1 + i + round) end, "broadcast after the others")
    ref.check(ctx, a, function(i)
      local q, k = math.floor(i / n), i % n
      return W * (q + k + round)
    end, "all_reduce after all_gather")
  end
end)
