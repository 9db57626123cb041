-- nodes_bench: between two ranks on different nodes (docs/multinode.md), the device's block copies
-- through the host proxy against the transport's own transfer of the same bytes, and a
-- device-initiated flag round trip against an MPI ping-pong, in the same run.
--   IRIS_NODE_SIZE=1 mpirun -np 2 iris-lua scripts/bench/nodes_bench.lua [size] [--blocks N] [--rounds N]
-- Rank 0 and the first rank of node 1 measure; other ranks take part in the collective steps only.
-- put_block/get_block: one launch of `blocks` blocks, each moving its share with ctx.put_block or
-- ctx.get_block (each thread's slice is one request to the proxy). The transport's own: a host copy
-- through a peer view (one MPI_Put or MPI_Get of the whole range, then a flush). Medians of --iters.
local ffi = require "ffi"
local C = ffi.C

local opts = iris.options(arg, {
  name = "nodes_bench",
  about = "block copies and flag round trips across nodes against the transport's own, same run",
  usage = "IRIS_NODE_SIZE=1 mpirun -np 2 iris-lua " .. arg[0] .. " [size] [options]",
  positional = { { "size", "64MiB", "bytes moved one way", type = "bytes" } },
  options = {
    { "blocks", 8, "blocks of the put_block/get_block launch", type = "integer", min = 1, gpu = 132 },
    { "threads", 64, "threads per block", type = "integer", min = 1, max = 1024, gpu = 256 },
    { "rounds", 200, "flag round trips (and MPI ping-pongs) timed", type = "integer", min = 1 },
    { "iters", 5, "timed repetitions of each transfer", type = "integer", min = 1 },
  },
})
if not opts then return end
local ctx = iris.init {}
if ctx.nodes < 2 then
  iris.options.usage_error("needs ranks on two nodes: IRIS_NODE_SIZE=1 mpirun -np 2 iris-lua %s (or a job over two hosts)",
    arg[0])
end
local peer = 0
while C.iris_node_of(peer) == C.iris_node_of(0) do peer = peer + 1 end
local me = ctx.rank
local active = me == 0 or me == peer
local other = me == 0 and peer or 0

local mod = iris.compile [[
__device__ void share(long n, long* start, long* count) {
  const long chunk = (n + gridDim.x - 1) / gridDim.x;
  *start = blockIdx.x * chunk;
  *count = *start >= n ? 0 : (n - *start < chunk ? n - *start : chunk);
}
__global__ void put_all(const uint8_t* src, uint8_t* dst, long n, iris::Context ctx, int peer) {
  long start, count; share(n, &start, &count);
  ctx.put_block(src + start, dst + start, count, peer);
}
__global__ void get_all(const uint8_t* src, uint8_t* dst, long n, iris::Context ctx, int peer) {
  long start, count; share(n, &start, &count);
  ctx.get_block(src + start, dst + start, count, peer);
}
// The first rank raises the peer's flag and waits for its own, `rounds` times; the peer answers.
__global__ void ping(unsigned long long* flag, iris::Context ctx, int peer, int rounds, int first) {
  for (unsigned long long i = 1; i <= (unsigned long long)rounds; ++i) {
    if (first) {
      ctx.signal_set(flag, i, peer);
      ctx.wait_until(flag, iris::Cmp::ge, i);
    } else {
      ctx.wait_until(flag, iris::Cmp::ge, i);
      ctx.signal_set(flag, i, peer);
    }
  }
}
]]

local n = opts.size
local src, dst = ctx:full(n, 7, "uint8"), ctx:zeros(n, "uint8")
local flag = ctx:zeros(1, "uint64")
ctx:barrier()

local function median(samples)
  table.sort(samples)
  return samples[math.floor((#samples + 1) / 2)]
end

-- Seconds of `fn` on the active ranks, median of --iters, the ranks lined up before each.
local function timed(fn)
  local samples = {}
  for _ = 1, opts.iters + 1 do
    ctx:barrier()
    local t0 = C.iris_wall_time()
    if me == 0 then
      fn()
      ctx:synchronize()
    end
    samples[#samples + 1] = C.iris_wall_time() - t0
  end
  table.remove(samples, 1) -- the first warms up
  return median(samples)
end

local grid = { grid = opts.blocks, block = opts.threads }
local rows = {}
local put_device = timed(function() mod.put_all:launch(grid, src, dst, n, ctx, peer) end)
local put_transport = timed(function() dst:peer(peer):copy(src) end)
local get_device = timed(function() mod.get_all:launch(grid, src, dst, n, ctx, peer) end)
local get_transport = timed(function() dst:copy(src:peer(peer)) end)
ctx:barrier()
if me == 0 then iris.assert_equal(dst:sum(), 7 * n) end

local flag_trip = 0
if active then
  flag:fill(0)
end
ctx:barrier()
if active then
  local t0 = C.iris_wall_time()
  mod.ping:launch({ grid = 1, block = 1 }, flag, ctx, other, opts.rounds, me == 0 and 1 or 0)
  ctx:synchronize()
  flag_trip = (C.iris_wall_time() - t0) / opts.rounds
end
ctx:barrier()
local mpi_trip = 0
if active then
  local out = ffi.new("double[1]")
  assert(C.iris_transport_ping_pong(other, opts.rounds, out) == 0, "MPI ping-pong failed")
  mpi_trip = out[0]
end
ctx:barrier()
-- What the messages transport itself moves: MPI sends of the same bytes, host memory to host memory.
local bulk = 0
if active then
  local out = ffi.new("double[1]")
  assert(C.iris_transport_bulk_send(other, n, opts.iters, me == 0 and 1 or 0, out) == 0, "MPI bulk send failed")
  bulk = out[0]
end
ctx:barrier()

if me == 0 then
  local function gbs(seconds) return n / seconds / 1e9 end
  local transport = ffi.string(C.iris_transport_name())
  -- The transport's own figure: one_sided's put/get through a peer view; messages' bulk send (a peer
  -- view's copy is itself staged through the proxies there).
  local messages = transport:find("messages", 1, true) ~= nil
  local own_put = messages and bulk or put_transport
  local own_get = messages and bulk or get_transport
  print(("nodes_bench: rank 0 (node 0) and rank %d (node %d), %s, %s backend, %d blocks of %d threads"):format(peer,
    C.iris_node_of(peer), iris.plot.bytes_text(n), ctx.backend, opts.blocks, opts.threads))
  print(("  transport between nodes: %s"):format(transport))
  print(("  %-34s %10s %10s %8s"):format("", "ms", "GB/s", "ratio"))
  print(("  %-34s %10.3f %10.2f %8s"):format("MPI send, host to host", bulk * 1e3, gbs(bulk), ""))
  print(("  %-34s %10.3f %10.2f %8s"):format("host put through a peer view", put_transport * 1e3, gbs(put_transport), ""))
  print(("  %-34s %10.3f %10.2f %7.2fx"):format("put_block via the proxy", put_device * 1e3, gbs(put_device),
    own_put / put_device))
  print(("  %-34s %10.3f %10.2f %8s"):format("host get through a peer view", get_transport * 1e3, gbs(get_transport), ""))
  print(("  %-34s %10.3f %10.2f %7.2fx"):format("get_block via the proxy", get_device * 1e3, gbs(get_device),
    own_get / get_device))
  print(("  (ratios: the transport's own time over the device's: %s)"):format(messages and "the MPI send"
    or "the host copy through a peer view (one MPI_Put / MPI_Get)"))
  print(("  flag round trip (device, signal_set + wait_until): %.1f us; MPI ping-pong (8 B): %.1f us; ratio %.2f"):format(
    flag_trip * 1e6, mpi_trip * 1e6, flag_trip / mpi_trip))
end
