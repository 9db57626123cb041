-- ctx.ccl's variant copy_engine (all_gather, all_to_all, broadcast; docs/collectives.md): the copies
-- the host enqueues between the call's two kernels, against references computed in Lua: dtypes, sizes,
-- every root, in place, groups, calls back to back with the other variants without barriers, and what
-- it refuses.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"
local check = require "check"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank
local CE = { variant = "copy_engine" }

local function input(dtype, rank, i, salt) return ref.value(dtype, "sum", rank, i, salt or 3) end

iris.test("all_gather, all_to_all and broadcast: dtypes, sizes, every root", function()
  for _, dtype in ipairs { "uint8", "int16", "float16", "float32", "int64", "float64" } do
    for _, n in ipairs { 1, 7, 3000 } do
      local inp, out = ctx:zeros(n, dtype), ctx:zeros(n * W, dtype)
      ref.fill(inp, function(i) return input(dtype, me, i) end)
      assert(ctx.ccl.all_gather(out, inp, CE) == out)
      ref.check(ctx, out, function(i) return ref.as_read(dtype, input(dtype, math.floor(i / n), i % n)) end,
        ("all_gather %s %d"):format(dtype, n))
      local a, b = ctx:zeros(n * W, dtype), ctx:zeros(n * W, dtype)
      ref.fill(a, function(i) return input(dtype, me, i, 5) end)
      assert(ctx.ccl.all_to_all(b, a, CE) == b)
      -- chunk q of b = chunk me of rank q's a
      ref.check(ctx, b, function(i)
        local q, k = math.floor(i / n), i % n
        return ref.as_read(dtype, input(dtype, q, me * n + k, 5))
      end, ("all_to_all %s %d"):format(dtype, n))
      for root = 0, W - 1 do
        local t = ctx:zeros(n, dtype)
        ref.fill(t, function(i) return input(dtype, me, i, root + 7) end)
        assert(ctx.ccl.broadcast(t, root, CE) == t)
        ref.check(ctx, t, function(i) return ref.as_read(dtype, input(dtype, root, i, root + 7)) end,
          ("broadcast %s %d root %d"):format(dtype, n, root))
      end
    end
  end
end)

iris.test("all_gather in place, 2-d tensors along dim 1, a group, calls back to back", function()
  local n = 1200
  local out = ctx:zeros(n * W, "int32")
  local mine = out:narrow(1, me * n + 1, n)
  for k = 1, 4 do
    mine:fill(me * 10 + k)
    ctx.ccl.all_gather(out, mine, CE)
    for q = 0, W - 1 do iris.assert_equal(out:narrow(1, q * n + 1, n), q * 10 + k) end
    -- the other variants between, on the same tensors, no barrier
    ctx.ccl.all_gather(out, mine, { variant = k % 2 == 0 and "ll" or "persistent" })
    ctx.ccl.broadcast(out, k % W, CE)
    ctx.ccl.broadcast(out, 0, { variant = "push" })
    iris.assert_equal(out:narrow(1, me * n + 1, n), me * 10 + k) -- every out is the same: the gathered chunks
  end
  local rows = ctx:zeros({ 3 * W, 5 }, "float32")
  local part = ctx:full({ 3, 5 }, me + 0.5, "float32")
  ctx.ccl.all_gather(rows, part, CE)
  for q = 0, W - 1 do iris.assert_equal(rows:narrow(1, 3 * q + 1, 3), q + 0.5) end
  if W >= 3 and ctx.nodes == 1 then
    local t = ctx:full(16, me)
    local member = me == 0 or me == W - 1
    if member then ctx.ccl.broadcast(t, W - 1, { variant = "copy_engine", group = { 0, W - 1 } }) end
    iris.assert_equal(t, member and W - 1 or me)
    ctx:barrier()
  end
end)

iris.test("what copy_engine refuses, at the caller's line", function()
  if ctx.nodes > 1 then return iris.skip("across nodes a call takes the path between them, whatever its variant") end
  local window = ref.window(ctx, 4, 5, "float32")
  check.fails('variant "copy_engine" takes contiguous tensors chunked along dim 1', function()
    ctx.ccl.broadcast(window, 0, CE)
  end)
  check.fails('variant "copy_engine" takes contiguous tensors chunked along dim 1', function()
    ctx.ccl.all_gather(ctx:zeros({ 2, 4 * W }), ctx:zeros({ 2, 4 }), { variant = "copy_engine", dim = 2 })
  end)
  check.fails("variant must be", function() ctx.ccl.all_reduce(ctx:zeros(4), ctx:zeros(4), CE) end)
  local t = ctx:zeros(8)
  check.fails("variant copy_engine's copies are the host's calls on the stream", function()
    ctx:capture(function() ctx.ccl.broadcast(t, 0, CE) end)
  end)
end)
