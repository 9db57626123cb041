-- ctx.ccl inside ctx:capture (docs/graphs.md): a graph of collectives of several sizes and variants,
-- mixed with user kernels, replays to what making the same calls again gives, also with eager calls
-- in between; a group's collective binds its members only; a collective captured on some ranks only,
-- or different collectives, fail on every rank.
local ctx = iris.init { heap_size = "32MiB" }
local W, me = ctx.world_size, ctx.rank
-- Across nodes a collective of every rank copies between them through the host, so it refuses inside a
-- capture (the last case); the others need the ranks on one node.
local ACROSS = ctx.nodes > 1 and "collectives across nodes cannot be captured (the last case checks the refusal)"

local mod = iris.compile [[
// The next step's input from this step's result: small whole numbers, different on every rank.
__global__ void mix(int32_t* inp, const int32_t* out, long n, long out_n, int rank) {
  long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) inp[i] = (out[i % out_n] + rank * 7 + static_cast<int32_t>(i % 13)) % 1009;
}
]]

local function launch_mix(inp, out, rank)
  local n = inp:numel()
  mod.mix:launch({ grid = iris.cdiv(n, 256), block = 256 }, inp, out, n, out:numel(), rank)
end

local SIZES = { 256, 16384, 65536 } -- 1 KiB, 64 KiB and 256 KiB of int32

-- Every collective, at every size, each followed by the kernel that makes the next input from it.
local function tensors()
  local set = {}
  for i, n in ipairs(SIZES) do
    local s = {}
    s.inp = ctx:arange(n, "int32")
    s.out = ctx:zeros(n, "int32")
    s.gathered = ctx:zeros(n * W, "int32")
    s.chunk = ctx:zeros(n, "int32")
    s.scattered = ctx:zeros(n * W, "int32")
    s.swapped = ctx:zeros(n * W, "int32")
    s.cast = ctx:zeros(n, "int32")
    set[i] = s
  end
  ctx:barrier()
  return set
end

local function step(set)
  for _, s in ipairs(set) do
    ctx.ccl.all_reduce(s.out, s.inp)
    launch_mix(s.inp, s.out, me)
    ctx.ccl.all_gather(s.gathered, s.inp)
    launch_mix(s.scattered, s.gathered, me)
    ctx.ccl.reduce_scatter(s.chunk, s.scattered)
    launch_mix(s.swapped, s.chunk, me)
    ctx.ccl.all_to_all(s.gathered, s.swapped)
    launch_mix(s.cast, s.gathered, me)
    ctx.ccl.broadcast(s.cast, W - 1)
    launch_mix(s.inp, s.cast, me)
  end
end

local function same(a, b, what)
  for i, s in ipairs(a) do
    for name, t in pairs(s) do iris.assert_equal(t, b[i][name], ("%s: %s at %d elements"):format(what, name, SIZES[i])) end
  end
end

iris.test("replays of every collective at several sizes equal the same calls made again", function()
  if ACROSS then iris.skip(ACROSS) end
  local replayed, eager = tensors(), tensors()
  local g = ctx:capture(function() step(replayed) end)
  for k = 1, 3 do
    g:replay()
    step(eager)
    same(replayed, eager, "replay " .. k)
  end
  g:replay(4)
  for _ = 1, 4 do step(eager) end
  same(replayed, eager, "g:replay(4)")
  g:free()
end)

iris.test("eager collectives between replays keep the calls in step", function()
  if ACROSS then iris.skip(ACROSS) end
  local replayed, eager = tensors(), tensors()
  local extra = ctx:full(1000, me, "int32")
  local g = ctx:capture(function() step(replayed) end)
  for k = 1, 3 do
    g:replay(k)
    for _ = 1, k do step(eager) end
    ctx.ccl.all_reduce(extra, extra) -- an eager call between replays
    same(replayed, eager, "after " .. k .. " replays")
  end
  iris.assert_equal(extra, (W * (W - 1) / 2) * W ^ 2)
  g:free()
end)

iris.test("all_reduce's variants replay", function()
  if ACROSS then iris.skip(ACROSS) end
  for _, variant in ipairs { "one_shot", "two_shot", "ring", "atomic", "spinlock" } do
    local x, y, z = ctx:full(4096, me + 1, "int32"), ctx:zeros(4096, "int32"), ctx:zeros(4096, "int32")
    local g = ctx:capture(function()
      ctx.ccl.all_reduce(y, x, { variant = variant })
      launch_mix(x, y, me)
    end)
    g:replay(3)
    local a = ctx:full(4096, me + 1, "int32")
    for _ = 1, 3 do
      ctx.ccl.all_reduce(z, a, { variant = variant })
      launch_mix(a, z, me)
    end
    iris.assert_equal(y, z, variant)
    g:free()
  end
end)

iris.test("a group's collective is captured by its members only", function()
  if W < 3 then iris.skip("a group that leaves a rank out needs 3 ranks") end
  local x = ctx:full(512, me + 1, "int32")
  local g = ctx:capture(function()
    if me < 2 then ctx.ccl.all_reduce(x, x, { group = { 0, 1 } }) end
  end)
  g:replay(2)
  iris.assert_equal(x, me < 2 and 6 or me + 1)
  g:free()
end)

iris.test("a collective captured on some ranks only fails on every rank", function()
  if ACROSS then iris.skip(ACROSS) end
  if W < 2 then iris.skip("one rank captures alone") end
  local x = ctx:zeros(256, "int32")
  local ok, err = pcall(ctx.capture, ctx, function()
    if me == 0 then ctx.ccl.all_reduce(x, x) end
  end)
  assert(not ok and tostring(err):find("rank 0 captured ctx.ccl.all_reduce (", 1, true), err)
  ok, err = pcall(ctx.capture, ctx, function()
    if me == 0 then ctx.ccl.all_reduce(x, x) else ctx.ccl.broadcast(x, 0) end
  end)
  assert(not ok and tostring(err):find("the ranks captured different collectives", 1, true), err)
  ctx.ccl.all_reduce(x, x) -- the calls are in step afterwards
  iris.assert_equal(x, 0)
end)

iris.test("across nodes a collective refuses inside a capture, naming itself", function()
  if ctx.nodes == 1 then iris.skip("one node (IRIS_NODE_SIZE splits the ranks into nodes)") end
  local x = ctx:zeros(256, "int32")
  local fn = function() ctx.ccl.all_reduce(x, x) end
  local ok, err = pcall(ctx.capture, ctx, fn)
  assert(not ok and tostring(err):find(("ccl_graph.lua:%d: ctx.ccl.all_reduce cannot run inside ctx:capture(fn): "
    .. "across nodes"):format(debug.getinfo(fn, "S").linedefined), 1, true), err)
  ctx.ccl.all_reduce(x, x) -- still usable
  iris.assert_equal(x, 0)
end)
