-- bandwidth_bench: put_block/get_block between two ranks' devices against the copy engine (Backend::copy_device to the peer's mapped heap), same run.
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size, default 1GiB (cpu: 64MiB)] [blocks] [threads]
local ffi = require "ffi"
local backend = os.getenv("IRIS_BACKEND") or "auto"
local size_text = arg and arg[1] or (backend == "cpu" and "64MiB" or "1GiB")
local bytes_out = ffi.new("uint64_t[1]")
assert(ffi.C.iris_parse_byte_size(size_text, "size", bytes_out) == 0, "size: " .. ffi.string(ffi.C.iris_last_error()))
local bytes = tonumber(bytes_out[0])
local ctx = iris.init { heap_size = 2 * bytes + 64 * 1024 * 1024 }
assert(ctx.world_size >= 2, "run with at least 2 ranks: mpirun -np 2 iris-lua " .. (arg and arg[0] or "bandwidth_bench.lua"))
local blocks = tonumber(arg and arg[2]) or 1056 -- a few waves of blocks on a 132-SM GPU
local threads = tonumber(arg and arg[3]) or 512

local mod = iris.compile [[
// Each block moves its contiguous share of the buffer with the block-cooperative copies.
__device__ void share(size_t n, size_t* start, size_t* count) {
  const size_t chunk = ((n + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;  // 16-byte aligned shares
  *start = blockIdx.x * chunk;
  *count = *start >= n ? 0 : (n - *start < chunk ? n - *start : chunk);
}
__global__ void push(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer) {
  size_t start, count; share(n, &start, &count);
  ctx.put_block(src + start, dst + start, count, peer);
}
__global__ void pull(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer) {
  size_t start, count; share(n, &start, &count);
  ctx.get_block(src + start, dst + start, count, peer);
}
]]
local src = ctx:zeros(bytes, "uint8")
local dst = ctx:zeros(bytes, "uint8")
local cfg = { grid = blocks, block = threads }

ctx:barrier()
if ctx.rank == 0 then
  local peer = 1
  -- Where rank 1's dst is, as this rank sees it: its heap base here plus the tensor's heap offset.
  local peer_dst = ffi.cast("char*", ffi.C.iris_heap_base(peer)) + dst:offset()
  local own_src = ffi.cast("char*", ffi.C.iris_heap_base(ctx.rank)) + src:offset()
  local gbs = function(r) return bytes / (r.median_ms * 1e-3) / 1e9 end
  local copy_engine = iris.bench(function() assert(ffi.C.iris_copy_device(peer_dst, own_src, bytes) == 0) end)
  local put = iris.bench(function() mod.push:launch(cfg, src, dst, bytes, ctx, peer) end)
  local get = iris.bench(function() mod.pull:launch(cfg, src, dst, bytes, ctx, peer) end)
  print(("backend %s, %s one way, %d blocks x %d threads (median of %d):"):format(ctx.backend, size_text, blocks,
    threads, put.iters))
  print(("  copy engine (copy_device to the peer's heap)  %8.1f GB/s"):format(gbs(copy_engine)))
  print(("  put_block (rank 0 -> rank 1)                  %8.1f GB/s  = %.3f x copy engine"):format(gbs(put),
    gbs(put) / gbs(copy_engine)))
  print(("  get_block (rank 1 -> rank 0)                  %8.1f GB/s  = %.3f x copy engine"):format(gbs(get),
    gbs(get) / gbs(copy_engine)))
end
ctx:barrier()
