-- ctx.ccl.reduce, gather and scatter against references computed in Lua: every variant, dtypes and ops,
-- every root, odd sizes, 2-d views and dim 2, in place, groups, back-to-back calls without barriers,
-- and that the ranks whose output the call does not name keep theirs untouched.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"
local check = require "check"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank

local function make(shape, dtype)
  if type(shape) == "table" then return ref.window(ctx, shape[1], shape[2], dtype) end
  return ctx:zeros(shape, dtype)
end

local function numel(shape) return type(shape) == "table" and shape[1] * shape[2] or shape end
local function label(shape) return type(shape) == "table" and shape[1] .. "x" .. shape[2] or tostring(shape) end

-- A value no collective writes (checks that a rank's untouched output stayed as it was).
local function sentinel(dtype, i) return ref.as_read(dtype, ref.value(dtype, "max", 1000 + me, i, 7)) end

-- ---- reduce ---------------------------------------------------------------------------------------

local function reduce_case(variant, dtype, op, shape, root, opts)
  local inp, out = make(shape, dtype), make(shape, dtype)
  ref.fill(inp, function(i) return ref.value(dtype, op, me, i) end)
  ref.fill(out, function(i) return sentinel(dtype, i) end)
  local options = { variant = variant, op = op }
  for k, v in pairs(opts or {}) do options[k] = v end
  assert(ctx.ccl.reduce(out, inp, root, options) == out, "reduce returns its output tensor")
  local what = ("reduce %s %s %s %s root %d"):format(variant, dtype, op, label(shape), root)
  if me == root then
    ref.check(ctx, out, function(i)
      local values = {}
      for r = 0, W - 1 do values[#values + 1] = ref.value(dtype, op, r, i) end
      return ref.as_read(dtype, ref.reduce(dtype, op, values))
    end, what)
  else
    ref.check(ctx, out, function(i) return sentinel(dtype, i) end, what .. ": a rank other than the root keeps its out")
  end
  ref.check(ctx, inp, function(i) return ref.as_read(dtype, ref.value(dtype, op, me, i)) end, what .. ": inp")
end

for _, variant in ipairs { "one_shot", "two_shot", "ll" } do
  iris.test("reduce " .. variant .. ": every dtype, every root", function()
    for _, dtype in ipairs(ref.dtypes) do
      for root = 0, W - 1 do reduce_case(variant, dtype, "sum", 1000, root) end
    end
  end)

  iris.test("reduce " .. variant .. ": every op of int32, uint8, float32, bfloat16 and bool, sizes 1 and 7", function()
    for _, dtype in ipairs { "int32", "uint8", "float32", "bfloat16", "bool" } do
      for _, op in ipairs(ref.ops_for(dtype)) do
        for _, n in ipairs { 1, 7 } do reduce_case(variant, dtype, op, n, W - 1) end
      end
    end
  end)

  iris.test("reduce " .. variant .. ": in place", function()
    local t = ctx:zeros(2500, "int32")
    ref.fill(t, function(i) return me * 3 + i end)
    ctx.ccl.reduce(t, t, 0, { variant = variant })
    ref.check(ctx, t, function(i)
      if me ~= 0 then return me * 3 + i end
      return 3 * W * (W - 1) / 2 + W * i
    end, "in place")
  end)
end

iris.test("reduce: 2-d views, several tiles and blocks, default root and auto", function()
  for _, variant in ipairs { "one_shot", "two_shot" } do
    reduce_case(variant, "float16", "sum", { 37, 45 }, W - 1, { block_m = 8, block_n = 16, blocks = 5 })
    reduce_case(variant, "int64", "max", 5001, 0, { block_m = 4, block_n = 8, blocks = 3 })
  end
  local inp, out = ctx:full(300, me + 1), ctx:zeros(300)
  ctx.ccl.reduce(out, inp) -- root 0, auto
  iris.assert_equal(out, me == 0 and W * (W + 1) / 2 or 0)
  ctx.ccl.reduce(out, inp, { op = "max" }) -- options without a root
  iris.assert_equal(out, me == 0 and W or 0)
end)

-- ---- gather and scatter ---------------------------------------------------------------------------

local function input(dtype, rank, i) return ref.value(dtype, "sum", rank, i, 3) end

local function big_shape(shape, dim)
  if type(shape) == "number" then return shape * W end
  return dim == 1 and { shape[1] * W, shape[2] } or { shape[1], shape[2] * W }
end

-- Element i of a tensor of W chunks of `shape` along dim: its chunk and the index inside the chunk.
local function split(shape, dim, i)
  if type(shape) == "number" then return math.floor(i / shape), i % shape end
  local rows, cols = shape[1], shape[2]
  local ocols = dim == 2 and cols * W or cols
  local r, c = math.floor(i / ocols), i % ocols
  local q = dim == 1 and math.floor(r / rows) or math.floor(c / cols)
  return q, (dim == 1 and r % rows or r) * cols + (dim == 2 and c % cols or c)
end

-- The index in a tensor of W chunks of element j of chunk q (split's inverse).
local function join(shape, dim, q, j)
  if type(shape) == "number" then return q * shape + j end
  local rows, cols = shape[1], shape[2]
  local r, c = math.floor(j / cols), j % cols
  if dim == 1 then return (q * rows + r) * cols + c end
  return r * cols * W + q * cols + c
end

local SHAPES = { { 1, 1 }, { 7, 1 }, { 3000, 1 }, { { 5, 9 }, 1 }, { { 6, 11 }, 2 } }

for _, variant in ipairs { "pull", "ll" } do
  iris.test("gather " .. variant .. ": dtypes, sizes, dim 1 and 2, views, every root", function()
    for _, dtype in ipairs(ref.dtypes) do
      for _, case in ipairs(SHAPES) do
        local shape, dim = case[1], case[2]
        if variant == "pull" or type(shape) == "number" then
          local root = (numel(shape) + #dtype) % W
          local inp, out = make(shape, dtype), make(big_shape(shape, dim), dtype)
          ref.fill(inp, function(i) return input(dtype, me, i) end)
          ref.fill(out, function(i) return sentinel(dtype, i) end)
          assert(ctx.ccl.gather(out, inp, root, { variant = variant, dim = dim }) == out)
          local what = ("gather %s %s %s dim %d root %d"):format(variant, dtype, label(shape), dim, root)
          ref.check(ctx, out, function(i)
            if me ~= root then return sentinel(dtype, i) end
            local q, j = split(shape, dim, i)
            return ref.as_read(dtype, input(dtype, q, j))
          end, what)
        end
      end
    end
  end)

  iris.test("scatter " .. variant .. ": dtypes, sizes, dim 1 and 2, views, every root", function()
    for _, dtype in ipairs(ref.dtypes) do
      for _, case in ipairs(SHAPES) do
        local shape, dim = case[1], case[2]
        if variant == "pull" or type(shape) == "number" then
          local root = (numel(shape) + #dtype + 1) % W
          local inp, out = make(big_shape(shape, dim), dtype), make(shape, dtype)
          -- only the root's inp counts: every rank fills its own differently
          ref.fill(inp, function(i) return input(dtype, me, i) end)
          assert(ctx.ccl.scatter(out, inp, root, { variant = variant, dim = dim }) == out)
          local what = ("scatter %s %s %s dim %d root %d"):format(variant, dtype, label(shape), dim, root)
          ref.check(ctx, out, function(j) return ref.as_read(dtype, input(dtype, root, join(shape, dim, me, j))) end,
            what)
        end
      end
    end
  end)

  iris.test("gather and scatter " .. variant .. ": in place", function()
    local n = 1500
    local all = ctx:zeros(n * W, "int32")
    local mine = all:narrow(1, me * n + 1, n)
    ref.fill(mine, function(i) return me * 10000 + i end)
    ctx.ccl.gather(all, mine, W - 1, { variant = variant })
    if me == W - 1 then
      ref.check(ctx, all, function(i) return math.floor(i / n) * 10000 + i % n end, "gather in place")
    end
    if me == W - 1 then ref.fill(all, function(i) return 7 * i end) end
    ctx.ccl.scatter(mine, all, W - 1, { variant = variant })
    ref.check(ctx, mine, function(i) return 7 * (me * n + i) end, "scatter in place")
  end)
end

-- ---- groups, calls back to back, errors ---------------------------------------------------------------

iris.test("a group's rooted calls: its members alone, the root a global rank", function()
  if W < 3 then return iris.skip("a group that leaves a rank out needs 3 ranks") end
  if ctx.nodes > 1 then return iris.skip("a group that spans nodes without being every rank is refused there") end
  local group = { W - 1, 0, 1 } -- any order; members are ordered by rank: {0, 1, W - 1}
  local inp, out = ctx:full(64, me + 1, "int32"), ctx:zeros(64, "int32")
  local big = ctx:zeros(64 * 3, "int32")
  if me == 0 or me == 1 or me == W - 1 then
    ctx.ccl.reduce(out, inp, 1, { group = group })
    iris.assert_equal(out, me == 1 and 1 + 2 + W or 0)
    ctx.ccl.gather(big, inp, W - 1, { group = group, variant = "pull" })
    if me == W - 1 then
      iris.assert_equal(big:narrow(1, 1, 64), 1)
      iris.assert_equal(big:narrow(1, 65, 64), 2)
      iris.assert_equal(big:narrow(1, 129, 64), W)
    end
    ctx.ccl.scatter(out, big, W - 1, { group = group })
    iris.assert_equal(out, me == 0 and 1 or me == 1 and 2 or W)
  end
  ctx:barrier()
end)

iris.test("back to back: reduce, gather, scatter and the other collectives, no barrier between", function()
  local n = 777
  local a, b = ctx:zeros(n, "float32"), ctx:zeros(n, "float32")
  local big = ctx:zeros(n * W, "float32")
  for k = 1, 6 do
    local root = k % W
    a:fill(me + k)
    ctx.ccl.reduce(b, a, root, { variant = k % 2 == 0 and "ll" or "two_shot" })
    ctx.ccl.all_reduce(a, a)
    ctx.ccl.gather(big, a, root, { variant = k % 3 == 0 and "ll" or "pull" })
    ctx.ccl.scatter(a, big, root)
    ctx.ccl.broadcast(b, root)
    -- b: the reduction of me + k, broadcast from the root; a: the all_reduce of me + k, gathered at the
    -- root and scattered back
    iris.assert_equal(b, W * k + W * (W - 1) / 2)
    iris.assert_equal(a, W * k + W * (W - 1) / 2)
  end
end)

iris.test("what the rooted calls refuse, at the caller's line", function()
  local t, big = ctx:zeros(8), ctx:zeros(8 * W)
  check.fails("root must be a rank of the group", function() ctx.ccl.reduce(t, t, W) end)
  check.fails("root must be a rank of the group", function() ctx.ccl.gather(big, t, -1) end)
  check.fails("op", function() ctx.ccl.gather(big, t, 0, { op = "max" }) end)
  check.fails("root must be a rank of the group", function() ctx.ccl.scatter(t, big, 0.5) end)
  check.fails("variant", function() ctx.ccl.scatter(t, big, 0, { variant = "one_shot" }) end)
  check.fails("they must be the same", function() ctx.ccl.reduce(t, ctx:zeros(9), 0) end)
end)

iris.test("broadcast relay: each tile through one member, which passes it on", function()
  -- 2-D and strided too: the tiles of any view (the relay deals tiles, not chunks)
  local cases = { { "float32", W * 700 + 3 }, { "int16", { 33, 70 } }, { "uint8", 5 }, { "float64", { 64, 64 } } }
  for _, case in ipairs(cases) do
    local dtype, shape = case[1], case[2]
    for root = 0, W - 1 do
      local t = ctx:zeros(shape, dtype)
      ref.fill(t, function(i) return input(dtype, me, i) end)
      -- small tiles and few blocks: many tiles per block, every member relaying several
      assert(ctx.ccl.broadcast(t, root, { variant = "relay", block_m = 4, block_n = 32, blocks = 3 }) == t)
      ref.check(ctx, t, function(i) return ref.as_read(dtype, input(dtype, root, i)) end,
        ("broadcast relay %s root %d"):format(dtype, root))
    end
  end
  local big = ctx:zeros({ 96, 80 })
  local view = big:narrow(2, 9, 40) -- a strided view: rows of 40 in rows of 80
  ref.fill(view, function(i) return input("float32", me, i) end)
  ctx.ccl.broadcast(view, W - 1, { variant = "relay", block_m = 8, block_n = 16 })
  ref.check(ctx, view, function(i) return input("float32", W - 1, i) end, "broadcast relay of a strided view")
  if W >= 3 and ctx.nodes == 1 then -- a group's members alone
    local group = W > 3 and { 0, 2, W - 1 } or { 0, 2 }
    local member = me == 0 or me == 2 or (W > 3 and me == W - 1)
    local t = ctx:full(4 * 50, me)
    if member then ctx.ccl.broadcast(t, 2, { group = group, variant = "relay", block_m = 1, block_n = 16 }) end
    iris.assert_equal(t, member and 2 or me)
    ctx:barrier()
  end
end)

iris.test("broadcast scatter_all_gather: the root's chunks scattered, then all-gathered", function()
  for _, case in ipairs { { "float32", W * 700 }, { "int16", { W * 3, 37 } }, { "uint8", W } } do
    local dtype, shape = case[1], case[2]
    for root = 0, W - 1 do
      local t = ctx:zeros(shape, dtype)
      ref.fill(t, function(i) return input(dtype, me, i) end)
      assert(ctx.ccl.broadcast(t, root, { variant = "scatter_all_gather" }) == t)
      ref.check(ctx, t, function(i) return ref.as_read(dtype, input(dtype, root, i)) end,
        ("broadcast scatter_all_gather %s root %d"):format(dtype, root))
    end
  end
  if W >= 3 and ctx.nodes == 1 then -- a group's members alone
    local t = ctx:full(4 * 2, me)
    if me < 2 then
      ctx.ccl.broadcast(t, 1, { group = { 0, 1 }, variant = "scatter_all_gather" })
      iris.assert_equal(t, 1)
    end
    ctx:barrier()
  end
  if W > 1 and ctx.nodes == 1 then -- (across nodes a broadcast takes the path between them, whatever the variant)
    check.fails('variant "scatter_all_gather" takes a contiguous tensor whose first dimension (' .. (W + 1) .. ")",
      function() ctx.ccl.broadcast(ctx:zeros(W + 1), 0, { variant = "scatter_all_gather" }) end)
  end
end)
