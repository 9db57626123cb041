-- ctx.ccl.send and recv (docs/collectives.md, "Point to point") against references computed in Lua:
-- every dtype, sizes around whole words, views, both ranks of a pair sending first, a message to this
-- rank itself, messages queued ahead of their recvs, the pulled variant, collectives in between, and
-- what they refuse. Over simulated nodes (tests/lua/CMakeLists.txt) the same cases run with pairs inside a
-- node and across nodes (through the host proxy: device/iris/impl/ccl_p2p.hpp, "Between nodes").
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ref = require "ccl_reference"
local check = require "check"

local ctx = iris.init { heap_size = "16MiB" }
local W, me = ctx.world_size, ctx.rank
local staging = require("iris.ccl").staging(ctx)
local next_rank, prev_rank = (me + 1) % W, (me - 1) % W

local function value(dtype, rank, i, salt) return ref.value(dtype, "sum", rank, i, salt) end

-- Every rank sends to the next and receives from the previous one (at 1 rank: itself), sends first.
local function ring(dtype, make_send, make_recv, opts, salt)
  local s, r = make_send(dtype), make_recv(dtype)
  ref.fill(s, function(i) return value(dtype, me, i, salt) end)
  assert(ctx.ccl.send(s, next_rank, opts) == s, "send returns its tensor")
  assert(ctx.ccl.recv(r, prev_rank) == r, "recv returns its tensor")
  ref.check(ctx, r, function(i) return ref.as_read(dtype, value(dtype, prev_rank, i, salt)) end,
    ("%s from rank %d"):format(dtype, prev_rank))
  ref.check(ctx, s, function(i) return ref.as_read(dtype, value(dtype, me, i, salt)) end, "the sent tensor after")
end

iris.test("send and recv: every dtype, sizes around whole words, every rank sending first", function()
  for _, dtype in ipairs(ref.dtypes) do
    for _, n in ipairs { 1, 3, 7, 9, 1000 } do
      ring(dtype, function(d) return ctx:zeros(n, d) end, function(d) return ctx:zeros(n, d) end, nil, n)
    end
  end
end)

iris.test("send and recv: views, 2-d windows, another layout on each side", function()
  for _, dtype in ipairs { "int8", "float16", "float32", "float64" } do
    -- a 1-d view at an odd offset sent into a contiguous tensor
    ring(dtype, function(d) return ctx:zeros(40, d):narrow(1, 4, 33) end, function(d) return ctx:zeros(33, d) end)
    -- a 2-d window into another window
    ring(dtype, function(d) return ref.window(ctx, 7, 9, d) end, function(d) return ref.window(ctx, 7, 9, d) end)
  end
end)

iris.test("messages queued ahead of their recvs, collectives in between", function()
  local a, b = ctx:zeros(500, "int32"), ctx:zeros(500, "int32")
  local got = { ctx:zeros(500, "int32"), ctx:zeros(500, "int32") }
  for round = 1, 4 do
    a:fill(me * 100 + round)
    b:fill(me * 100 + round + 50)
    -- two messages to one rank wait for their recvs at once (the slots), a collective between them
    ctx.ccl.send(a, next_rank)
    ctx.ccl.all_reduce(ctx:zeros(8), ctx:zeros(8)) -- the collective's counters are its own
    ctx.ccl.send(b, next_rank)
    ctx.ccl.recv(got[1], prev_rank)
    ctx.ccl.recv(got[2], prev_rank, { blocks = 3 })
    iris.assert_equal(got[1], prev_rank * 100 + round)
    iris.assert_equal(got[2], prev_rank * 100 + round + 50)
  end
end)

iris.test("pairs: rank 0 and the last rank exchange, the others talk among themselves", function()
  if W < 2 then return iris.skip("a pair needs 2 ranks") end
  local t, got = ctx:full(64, me, "int64"), ctx:zeros(64, "int64")
  local peer = me == 0 and W - 1 or me == W - 1 and 0 or nil
  if peer then
    -- the lower rank receives first, the higher sends first: the order each side picks is its own
    if me == 0 then
      ctx.ccl.recv(got, peer)
      ctx.ccl.send(t, peer)
      iris.assert_equal(got, W - 1)
    else
      ctx.ccl.send(t, peer)
      ctx.ccl.recv(t, peer)
      iris.assert_equal(t, 0)
    end
  end
  ctx:barrier()
end)

iris.test("variant pull: a message larger than a slot, its send waits for the recv", function()
  if W < 2 then return iris.skip("pull sends to another rank") end
  local n = staging.words * 2 + 100 -- float32: more than one message holds
  local big = ctx:zeros(n, "float32")
  if me == 0 then
    ref.fill(big, function(i) return i % 1000 end)
    ctx.ccl.send(big, 1, { variant = "pull" })
  elseif me == 1 then
    ctx.ccl.recv(big, 0)
    ref.check(ctx, big, function(i) return i % 1000 end, "pulled message")
  end
  ctx:barrier()
  -- a small pulled message, and an eager one after it on the same pair
  local small, got = ctx:full(10, me + 1), ctx:zeros(10)
  if me == 0 then
    ctx.ccl.send(small, 1, { variant = "pull" })
    ctx.ccl.send(small, 1)
  elseif me == 1 then
    ctx.ccl.recv(got, 0)
    iris.assert_equal(got, 1)
    got:fill(0)
    ctx.ccl.recv(got, 0)
    iris.assert_equal(got, 1)
  end
  ctx:barrier()
end)

iris.test("captured in a graph with rooted collectives, replayed: each replay is the next message", function()
  local s, r, out, big = ctx:zeros(100), ctx:zeros(100), ctx:zeros(100), ctx:zeros(100 * W)
  -- (across nodes the collectives refuse a capture: docs/multinode.md; send and recv are captured alike)
  local rooted = ctx.nodes == 1
  local g = ctx:capture(function()
    ctx.ccl.send(s, next_rank)
    ctx.ccl.recv(r, prev_rank)
    if rooted then
      ctx.ccl.reduce(out, r, W - 1)
      ctx.ccl.gather(big, r, 0)
    end
  end)
  for k = 1, 3 do
    s:fill(me * 10 + k)
    g:replay()
    iris.assert_equal(r, prev_rank * 10 + k)
    if rooted and me == W - 1 then iris.assert_equal(out, 10 * W * (W - 1) / 2 + W * k) end
    if rooted and me == 0 then iris.assert_equal(big:narrow(1, 100 * (W - 1) + 1, 100), ((W - 2) % W) * 10 + k) end
  end
  g:free()
  -- eager messages after the replays continue the count
  s:fill(99)
  ctx.ccl.send(s, next_rank)
  ctx.ccl.recv(r, prev_rank)
  iris.assert_equal(r, 99)
end)

iris.test("what send and recv refuse, at the caller's line", function()
  local t = ctx:zeros(8)
  check.fails("peer must be a rank from 0 to", function() ctx.ccl.send(t, W) end)
  check.fails("peer must be a rank from 0 to", function() ctx.ccl.recv(t, -1) end)
  check.fails("peer must be a rank from 0 to", function() ctx.ccl.recv(t, 0.5) end)
  check.fails("unknown option 'variant'", function() ctx.ccl.recv(t, 0, { variant = "ll" }) end)
  check.fails('variant must be "auto", "ll" or "pull"', function() ctx.ccl.send(t, 0, { variant = "push" }) end)
  check.fails("waits for its recv", function() ctx.ccl.send(t, me, { variant = "pull" }) end)
  local big = ctx:zeros(staging.words * 2 + 8, "float32")
  check.fails("is more than one message holds", function() ctx.ccl.send(big, next_rank) end)
  check.fails("t", function() ctx.ccl.send({ 1, 2 }, 0) end)
end)

