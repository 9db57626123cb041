-- ctx.ccl over rank subgroups (only members call; a subgroup's calls do not disturb the others') and
-- the argument checks made in Lua before anything is launched.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"
local check = require "check"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank

-- The sum over `members` of rank q's element i (inputs: i + 10 q + salt).
local function group_sum(members, i, salt)
  local s = 0
  for _, q in ipairs(members) do s = s + i + 10 * q + salt end
  return s
end

iris.test("a group of one is a copy", function()
  local inp, out = ctx:zeros(100, "int32"), ctx:zeros(100, "int32")
  ref.fill(inp, function(i) return i + me end)
  for _, variant in ipairs { "one_shot", "two_shot", "ring", "atomic", "spinlock" } do
    ctx.ccl.all_reduce(out, inp, { group = { me }, variant = variant })
    ref.check(ctx, out, function(i) return i + me end, "group of one " .. variant)
  end
end)

iris.test("even and odd ranks reduce in their own groups, interleaved with world calls", function()
  local evens, odds = {}, {}
  for r = 0, W - 1 do table.insert(r % 2 == 0 and evens or odds, r) end
  local mine = me % 2 == 0 and evens or odds
  local t, all = ctx:zeros(777, "float32"), ctx:zeros(777, "float32")
  for round = 1, 3 do
    ref.fill(t, function(i) return i + 10 * me + round end)
    ref.fill(all, function(i) return i + 10 * me + round end)
    -- Listed in another order than sorted: members are ordered by rank anyway.
    local listed = {}
    for k = #mine, 1, -1 do listed[#listed + 1] = mine[k] end
    ctx.ccl.all_reduce(t, t, { group = listed, variant = round == 2 and "ring" or "auto" })
    ctx.ccl.all_reduce(all, all)
    ref.check(ctx, t, function(i) return group_sum(mine, i, round) end, "subgroup round " .. round)
    ref.check(ctx, all, function(i) return group_sum(ref.members(ctx), i, round) end, "world round " .. round)
  end
end)

iris.test("all_gather, reduce_scatter, all_to_all and broadcast in a group of the first and last rank", function()
  if W < 2 then return iris.skip("needs 2 ranks") end
  local group = { 0, W - 1 }
  local n = 50
  -- Allocation is collective over every rank; the collectives below only over the group.
  local inp, out, a2a = ctx:zeros(n, "int16"), ctx:zeros(2 * n, "int16"), ctx:zeros(2 * n, "int16")
  if me ~= 0 and me ~= W - 1 then return end -- the ranks in between take no part
  local index = me == 0 and 0 or 1
  ref.fill(inp, function(i) return i + 10 * me end)
  ctx.ccl.all_gather(out, inp, { group = group })
  ref.check(ctx, out, function(i)
    local q = group[math.floor(i / n) + 1]
    return i % n + 10 * q
  end, "group all_gather")
  ctx.ccl.reduce_scatter(inp, out, { group = group }) -- out is the same on both: inp = 2 * my chunk of out
  ref.check(ctx, inp, function(i) return 2 * (i + 10 * group[index + 1]) end, "group reduce_scatter")
  ctx.ccl.all_to_all(a2a, out, { group = group })
  ref.check(ctx, a2a, function(i) return i % n + 10 * group[index + 1] end, "group all_to_all")
  ref.fill(inp, function(i) return i * me end)
  ctx.ccl.broadcast(inp, W - 1, { group = group })
  ref.check(ctx, inp, function(i) return i * (W - 1) end, "group broadcast")
  ctx.ccl.broadcast(inp, { group = group }) -- the root defaults to the group's first member: rank 0
  ref.check(ctx, inp, function(i) return i * (W - 1) end, "group broadcast from rank 0")
end)

iris.test("arguments are checked at the caller's line", function()
  local f, g = ctx:zeros(8), ctx:zeros(8)
  local i32 = ctx:zeros(8, "int32")
  if W > 1 then
    check.fails("ctx.ccl.all_reduce: rank " .. me .. " is not in the group", ctx.ccl.all_reduce, f, g,
      { group = { (me + 1) % W } })
  end
  check.fails("is in the group twice", ctx.ccl.all_reduce, f, g, { group = { me, me } })
  check.fails("group[1] = number 99 is not a rank", ctx.ccl.all_reduce, f, g, { group = { 99 } })
  check.fails("op \"band\" takes integers or bool, not float32", ctx.ccl.all_reduce, f, g, { op = "band" })
  check.fails("op must be", ctx.ccl.all_reduce, f, g, { op = "avg" })
  check.fails("variant must be \"auto\" or \"one_shot\"", ctx.ccl.all_reduce, f, g, { variant = "tree" })
  check.fails("variant must be \"auto\" or \"persistent\", \"partitioned\"", ctx.ccl.all_gather, ctx:zeros(8 * W), f,
    { variant = "ring" })
  check.fails("unknown option 'ops'", ctx.ccl.all_reduce, f, g, { ops = "sum" })
  check.fails("dim must be 1 or 2", ctx.ccl.all_gather, ctx:zeros(8 * W), f, { dim = 3 })
  check.fails("out is float32, inp is int32", ctx.ccl.all_reduce, f, i32)
  check.fails("out has shape {8}, inp {9}", ctx.ccl.all_reduce, f, ctx:zeros(9))
  check.fails("so out must have shape {" .. 8 * W .. "}", ctx.ccl.all_gather, ctx:zeros(8 * W + 1), f)
  check.fails("dim 2 needs 2-d tensors", ctx.ccl.all_gather, ctx:zeros(8 * W), f, { dim = 2 })
  local big = ctx:zeros(16)
  check.fails("out and inp overlap without being the same tensor", ctx.ccl.all_reduce, big:narrow(1, 1, 8),
    big:narrow(1, 5, 8))
  check.fails("all_to_all", ctx.ccl.all_to_all, g, g)
  local wide = ref.window(ctx, 128, 1024, "float32")
  check.fails("tiles of 128 x 1024 float32 elements are too large", ctx.ccl.all_reduce, wide, wide,
    { block_m = 128, block_n = 1024 })
  check.fails("blocks must be an integer from 1 to 512", ctx.ccl.all_reduce, f, g, { blocks = 0 })
  check.fails("root must be a rank of the group", ctx.ccl.broadcast, f, W + 3)
  check.fails("out must be a heap tensor, got nil", ctx.ccl.all_reduce, nil, g)
  check.fails("read-only", ctx.ccl.all_reduce, ctx:heap_bases(), ctx:heap_bases())
  local freed = ctx:zeros(8)
  freed:free()
  check.fails("this tensor was freed", ctx.ccl.all_reduce, freed, g)
  local ok, message = pcall(ctx.ccl.all_reduce, f, g, { nope = 1 })
  assert(not ok and message:find("ccl_groups.lua:%d+: ctx.ccl.all_reduce: unknown option 'nope'"),
    "the message names the caller's line: " .. tostring(message))
end)
