-- Nodes (docs/multinode.md): the layout the context reports, and the device API reaching every rank,
-- on this rank's node or another, through the same calls. Registered at 1, 2 and 4 ranks as one node,
-- and (tests/lua/CMakeLists.txt) at 4 ranks as 2 simulated nodes of 2 and 3 ranks as nodes of 2 and 1.
local ctx = iris.init { heap_size = "32MiB" }
local W, me = ctx.world_size, ctx.rank
local N = tonumber(os.getenv("IRIS_NODE_SIZE") or "") or W

local function fails_with(fn, pattern)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern), tostring(err))
end

iris.test("ctx.node, ctx.nodes, ctx.local_rank and ctx.local_size describe the layout", function()
  iris.assert_equal(ctx.node, math.floor(me / N))
  iris.assert_equal(ctx.nodes, math.ceil(W / N))
  iris.assert_equal(ctx.local_rank, me % N)
  iris.assert_equal(ctx.local_size, math.min(N, W - ctx.node * N))
  fails_with(function() ctx.node = 3 end, "read%-only")
end)

iris.test("a second iris.init with the same node_size is the same context, another is an error", function()
  assert(iris.init { node_size = N } == ctx)
  if W > 1 then
    fails_with(function() iris.init { node_size = N == 1 and W or 1 } end, "cannot regroup the ranks into nodes")
  end
  fails_with(function() iris.init { node_size = 0 } end, "node_size is a whole number of ranks")
end)

iris.test("the heap bases table holds addresses for this node and a tag for the others", function()
  local bases = ctx:heap_bases():to_table()
  for r = 0, W - 1 do
    local b = bases[r + 1]
    if math.floor(r / N) == ctx.node then
      assert(b > 0 and b < 2 ^ 63, ("rank %d's base is an address"):format(r))
    else
      assert(b >= 2 ^ 63, ("rank %d's base is tagged"):format(r))
      iris.assert_equal(math.floor((b - 2 ^ 63) / 2 ^ 48), r)
    end
  end
end)

local mod = iris.compile [[
// Atomics of this rank's node and of other nodes go to two words (`side`): across nodes on GPUs, other
// nodes' atomics are atomic with each other but not with a GPU's own on one word (docs/multinode.md).
// Nodes are `node_size` consecutive ranks here.
__device__ int side(iris::Context ctx, int peer, int node_size) { return peer / node_size == ctx.rank / node_size ? 0 : 1; }
// Every rank adds its rank + 1 into every rank's counter, stores into its slot of every rank's row,
// raises its flag there (release), and waits for every rank's flag in its own heap.
__global__ void all_pairs(iris::Context ctx, long long* counter, int* row, unsigned long long* flags,
                          unsigned long long epoch, int node_size) {
  int peer = threadIdx.x;
  if (peer >= ctx.world_size) return;
  ctx.atomic_add(counter + side(ctx, peer, node_size), (long long)(ctx.rank + 1), peer);
  ctx.store(row + ctx.rank, ctx.rank * 10 + peer, peer);
  ctx.signal_set(flags + ctx.rank, epoch, peer);
  ctx.wait_until(flags + peer, iris::Cmp::ge, epoch);
}
// Reads back: what every rank holds in slot `me` of its row (loads), and a fetch-and-max.
__global__ void read_back(iris::Context ctx, const int* row, int* seen, int* maxed, int node_size) {
  int peer = threadIdx.x;
  if (peer >= ctx.world_size) return;
  seen[peer] = ctx.load(row + ctx.rank, peer);
  ctx.atomic_max(maxed + side(ctx, peer, node_size), ctx.rank, peer);
}
// Half-precision atomics go through the transport's compare-and-swap.
__global__ void add_half(iris::Context ctx, iris::half* h, int peer) { ctx.atomic_add(h, iris::half(1.0f), peer); }

// copy_block between two ranks of another node (or one rank twice): this rank's proxy gets each
// slice and puts it (docs/multinode.md); into slot ctx.rank of dst.
__global__ void copy_between(iris::Context ctx, const long long* src, long long* dst, long n, int from, int to) {
  ctx.copy_block(src, dst + (long)ctx.rank * n, (size_t)n, from, to);
}
]]

iris.test("loads, stores, atomics and signals reach every rank, and waits see them", function()
  local counter, row = ctx:zeros(2, "int64"), ctx:zeros(W, "int32")
  local flags, seen, maxed = ctx:zeros(W, "uint64"), ctx:zeros(W, "int32"), ctx:full(2, -1, "int32")
  mod.all_pairs:launch({ grid = 1, block = W }, ctx, counter, row, flags, 1, N)
  ctx:barrier()
  local counts = counter:to_table()
  iris.assert_equal(counts[1] + counts[2], W * (W + 1) / 2)
  local want = {}
  for r = 0, W - 1 do want[r + 1] = r * 10 + me end
  iris.assert_equal(row, want)
  mod.read_back:launch({ grid = 1, block = W }, ctx, row, seen, maxed, N)
  ctx:barrier()
  for r = 0, W - 1 do want[r + 1] = me * 10 + r end
  iris.assert_equal(seen, want)
  local maxima = maxed:to_table()
  iris.assert_equal(math.max(maxima[1], maxima[2]), W - 1)
  local h = ctx:zeros(1, "float16")
  mod.add_half:launch({ grid = 1, block = 1 }, ctx, h, (me + 1) % W)
  ctx:barrier()
  iris.assert_equal(h:item(), 1)
end)

iris.test("peer views of every rank copy and read through the transport", function()
  local t = ctx:arange(me * 100, me * 100 + 8, 1, "int32")
  ctx:barrier()
  for r = 0, W - 1 do
    iris.assert_equal(t:peer(r):get(3), r * 100 + 2)
    iris.assert_equal(t:narrow(1, 2, 3):peer(r):to_table(), { r * 100 + 1, r * 100 + 2, r * 100 + 3 })
  end
  local inbox = ctx:full(8, -1, "int32")
  inbox:peer((me + 1) % W):copy(t)
  ctx:barrier()
  local from = (me - 1) % W
  iris.assert_equal(inbox:sum(), 8 * from * 100 + 28)
end)

-- Host transfers of blocks over 256 KiB with the ranks of other nodes, many in a row, into contiguous and
-- strided (staged through host memory, as ctx.ccl's gathers across nodes do) destinations and out of
-- them: each is complete when the call returns (docs/multinode.md). Regression: Open MPI 4.1's osc ucx on
-- UCX's shared-memory transports returned from MPI_Win_flush_all before such a get had landed (its data
-- came later, into reused or freed memory: all_gather_matmul's wrong result across nodes, then crashes).
iris.test("large host transfers with other nodes are complete on return, many in a row", function()
  local rows, cols = 136, 512 -- float32: 272 KiB
  local mine = ctx:empty({ rows, cols }, "float32")
  local got = ctx:empty({ rows, cols }, "float32")
  local wide = ctx:empty({ rows, 2 * cols }, "float32")
  local inbox = ctx:empty({ W, rows, cols }, "float32")
  local function expect(t, value, what)
    if t:min() ~= value or t:max() ~= value then
      error(("rank %d, %s: expected every element %s, found %s to %s"):format(me, what, value, t:min(), t:max()), 2)
    end
  end
  for round = 1, 40 do
    local function value(r) return r * 1000 + round end
    mine:fill(value(me))
    inbox:fill(-1)
    ctx:barrier()
    for r = 0, W - 1 do
      if math.floor(r / N) ~= ctx.node then
        got:fill(-1)
        got:copy(mine:peer(r))
        expect(got, value(r), ("round %d, the copy from rank %d"):format(round, r))
        local strided = wide:narrow(2, cols + 1, cols)
        strided:fill(-1)
        strided:copy(mine:peer(r))
        expect(strided, value(r), ("round %d, the strided copy from rank %d"):format(round, r))
        inbox:peer(r):narrow(1, me + 1, 1):copy(mine:view(1, rows, cols))
      end
    end
    ctx:barrier()
    for r = 0, W - 1 do
      if math.floor(r / N) ~= ctx.node then
        expect(inbox:narrow(1, r + 1, 1), value(r), ("round %d, what rank %d put"):format(round, r))
      end
    end
    ctx:barrier() -- nobody refills its blocks while another still reads them
  end
  for _, t in ipairs { mine, got, wide, inbox } do t:free() end
end)

-- ctx.ccl.send and recv with a rank of another node (through the proxy: device/iris/impl/ccl_p2p.hpp,
-- "Between nodes"): messages of a pair in order, two queued ahead of their recvs, views on either side,
-- and pulled messages larger than a slot. Each rank sends to rank + node size and receives from rank -
-- node size (another node's where there is one; itself on one node).
iris.test("ctx.ccl.send and recv with another node: in order, views, pulled", function()
  local to, from = (me + N) % W, (me - N) % W
  local a = ctx:arange(me * 1000, me * 1000 + 37, 1, "int32")
  local grid = ctx:arange(me * 100, me * 100 + 60, 1, "float64"):view(6, 10)
  ctx.ccl.send(a, to)
  ctx.ccl.send(grid:narrow(1, 2, 4):narrow(2, 3, 3), to) -- rows 2-5, columns 3-5: 12 elements, strided
  local got_a, got_grid = ctx:zeros(37, "int32"), ctx:zeros({ 5, 8 }, "float64")
  ctx.ccl.recv(got_a, from)
  ctx.ccl.recv(got_grid:narrow(1, 2, 3):narrow(2, 2, 4), from) -- into a 3 x 4 window
  iris.assert_equal(got_a, ctx:arange(from * 1000, from * 1000 + 37, 1, "int32"))
  local want = {}
  for r = 1, 4 do
    for c = 2, 4 do want[#want + 1] = from * 100 + r * 10 + c end
  end
  iris.assert_equal(got_grid:narrow(1, 2, 3):narrow(2, 2, 4):clone():view(12), want)
  iris.assert_equal(got_grid:sum(), (from * 100) * 12 + 12 * 0 + (10 + 20 + 30 + 40) * 3 + (2 + 3 + 4) * 4)
  -- pulled: rank 0 to rank N (another node's) from a strided window larger than a slot, and back into one
  local peer = N % W
  if peer == 0 then return end
  local words = require("iris.ccl").staging(ctx).words
  local rows = math.ceil((2 * words + 100) / 64)
  -- (allocations are collective: every rank makes them)
  local wide = ctx:arange(0, rows * 70, 1, "float32"):view(rows, 70)
  local back, got, twenty = ctx:zeros({ 4, 9 }, "int64"), ctx:zeros(rows * 64, "float32"), ctx:arange(1, 21, 1, "int64")
  if me == 0 then
    ctx.ccl.send(wide:narrow(2, 4, 64), peer, { variant = "pull" })
    ctx.ccl.recv(back:narrow(2, 2, 5), peer) -- 20 elements into a strided window
    iris.assert_equal(back:sum(), 20 * 21 / 2)
    iris.assert_equal(back:narrow(2, 1, 1):sum() + back:narrow(2, 7, 3):sum(), 0)
  elseif me == peer then
    ctx.ccl.recv(got, 0)
    local want_sum = 0
    for r = 0, rows - 1 do want_sum = want_sum + 64 * (r * 70 + 3) + 64 * 63 / 2 end
    iris.assert_equal(got:sum(), want_sum)
    iris.assert_equal(got:narrow(1, 64 * 5 + 1, 2):to_table(), { 5 * 70 + 3, 5 * 70 + 4 })
    ctx.ccl.send(twenty, 0, { variant = "pull" })
  end
  ctx:barrier()
end)

-- copy_block and host copies between two ranks that are both on another node: each rank copies from the
-- first rank of the next node to its last one (the same rank where that node has one), over 256 KiB so
-- that several threads' slices travel, through this rank's proxy.
iris.test("copy_block and host copies between two ranks of another node", function()
  local nodes = math.ceil(W / N)
  local function ends(r) -- the first and last ranks of the node after r's
    local n = (math.floor(r / N) + 1) % nodes
    return n * N, math.min(W, (n + 1) * N) - 1
  end
  local n = 40000 -- int64: 312.5 KiB
  local src = ctx:arange(me * 1000000, me * 1000000 + n, 1, "int64")
  local dst, host = ctx:full(W * n, -1, "int64"), ctx:full(W * n, -1, "int64")
  local from, to = ends(me)
  if nodes > 1 then
    mod.copy_between:launch({ grid = 1, block = 4 }, ctx, src, dst, n, from, to)
    host:narrow(1, me * n + 1, n):peer(to):copy(src:peer(from))
  end
  ctx:barrier()
  for c = 0, W - 1 do
    local f, t = ends(c)
    local want = nodes > 1 and t == me and f * 1000000 or -1
    for _, got in ipairs { dst, host } do
      local slot = got:narrow(1, c * n + 1, n)
      iris.assert_equal({ slot:get(1), slot:get(n), slot:sum() },
        { want, want < 0 and -1 or want + n - 1, want < 0 and -n or want * n + n * (n - 1) / 2 })
    end
  end
  ctx:barrier()
end)


-- ctx.ccl over groups that span nodes without being every rank (only members call; nothing runs on the
-- others): every collective against references, and what such a group refuses.
iris.test("ctx.ccl over a group that spans nodes without being every rank", function()
  -- rank 1 (rank 0 in nodes of 1) with the second node's first rank; rank 0 with the second node
  local groups = { { N == 1 and 0 or 1, N }, { 0 } }
  for r = N, math.min(W, 2 * N) - 1 do table.insert(groups[2], r) end
  if math.ceil(W / N) < 2 or #groups[2] == W then return iris.skip("no group spans nodes without being every rank") end
  local k = 5
  for _, g in ipairs(groups) do
    local index
    for j, r in ipairs(g) do
      if r == me then index = j - 1 end
    end
    local G, last, o = #g, g[#g], { group = g }
    local function sum_over(f) local s = 0 for _, r in ipairs(g) do s = s + f(r) end return s end
    -- (allocations are collective over every rank: all make them, members alone call)
    local out, inp, red = ctx:zeros(300), ctx:full(300, me + 1), ctx:full(300, -1)
    local imax, imax_in = ctx:zeros(7, "int32"), ctx:full(7, 10 * me, "int32")
    local rs, rs_in = ctx:zeros(k, "int64"), ctx:arange(0, G * k, 1, "int64"):add_(me)
    local ag, mine = ctx:zeros(G * k, "int32"), ctx:full(k, me, "int32")
    local b = ctx:full(k, me, "float64")
    local a2a, a2a_in = ctx:zeros(G, "int32"), ctx:arange(me * 100, me * 100 + G, 1, "int32")
    local gathered, piece, scattered = ctx:full(G * k, -1, "int32"), ctx:zeros(k, "int32"), ctx:arange(0, G * k, 1, "int32")
    local wide, narrow_in = ctx:zeros({ 4, 4 }), ctx:zeros({ 4, 2 })
    if index then
      iris.assert_equal(ctx.ccl.all_reduce(out, inp, o), sum_over(function(r) return r + 1 end))
      ctx.ccl.all_reduce(imax, imax_in, { group = g, op = "max" })
      iris.assert_equal(imax, 10 * last)
      ctx.ccl.reduce(red, inp, last, o)
      iris.assert_equal(red, me == last and sum_over(function(r) return r + 1 end) or -1)
      -- chunk j of the reduce_scatter is member j's: its elements j*k .. j*k + k - 1, plus each rank
      ctx.ccl.reduce_scatter(rs, rs_in, o)
      iris.assert_equal(rs:sum(), G * (index * k * k + k * (k - 1) / 2) + k * sum_over(function(r) return r end))
      ctx.ccl.all_gather(ag, mine, o)
      local want = {}
      for _, r in ipairs(g) do for _ = 1, k do want[#want + 1] = r end end
      iris.assert_equal(ag, want)
      iris.assert_equal(ctx.ccl.broadcast(b, last, o), last)
      ctx.ccl.all_to_all(a2a, a2a_in, o)
      local want_a2a = {}
      for _, r in ipairs(g) do want_a2a[#want_a2a + 1] = r * 100 + index end
      iris.assert_equal(a2a, want_a2a)
      ctx.ccl.gather(gathered, mine, last, o)
      if me == last then iris.assert_equal(gathered, want) else iris.assert_equal(gathered, -1) end
      ctx.ccl.scatter(piece, scattered, last, o)
      iris.assert_equal(piece:sum(), index * k * k + k * (k - 1) / 2)
      -- refused at the caller's line: in place, strided, a root outside the group
      local function fails(pattern, fn)
        local ok, err = pcall(fn)
        assert(not ok and tostring(err):find(pattern, 1, true), tostring(err))
      end
      fails("cannot run in place", function() ctx.ccl.all_reduce(out, out, o) end)
      fails("takes contiguous tensors", function() ctx.ccl.all_reduce(wide:narrow(2, 1, 2), narrow_in, o) end)
      fails("root must be a rank of the group", function() ctx.ccl.broadcast(b, W + 5, o) end)
    end
    ctx:barrier()
  end
end)
