-- bandwidth_bench: put_block/get_block between two ranks' devices against the copy engine (Backend::copy_device to the peer's mapped heap), same run.
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] [blocks] [threads] [loads in flight]
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] sweep
-- size: default 1GiB (cpu: 64MiB); blocks 2112 (16 per SM of a 132-SM GPU; cpu: 8); threads 512 (cpu:
-- 64); loads in flight per thread 4 (IRIS_BLOCK_COPY_UNROLL). "sweep" measures a grid of those three and prints one
-- line each, so one run finds the best shape.
local ffi = require "ffi"
local backend = os.getenv("IRIS_BACKEND") or "auto"
local size_text = arg[1] or (backend == "cpu" and "64MiB" or "1GiB")
local bytes_out = ffi.new("uint64_t[1]")
assert(ffi.C.iris_parse_byte_size(size_text, "size", bytes_out) == 0, "size: " .. ffi.string(ffi.C.iris_last_error()))
local bytes = tonumber(bytes_out[0])
local ctx = iris.init { heap_size = 2 * bytes + 64 * 1024 * 1024 }
assert(ctx.world_size >= 2, "run with at least 2 ranks: mpirun -np 2 iris-lua " .. arg[0])

local source = [[
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
local modules = {} -- loads in flight -> compiled module
local function module_for(in_flight)
  modules[in_flight] = modules[in_flight] or iris.compile(source, { defines = { IRIS_BLOCK_COPY_UNROLL = in_flight } })
  return modules[in_flight]
end

local src = ctx:zeros(bytes, "uint8")
local dst = ctx:zeros(bytes, "uint8")
local peer = 1
local function gbs(r) return bytes / (r.median_ms * 1e-3) / 1e9 end

-- Only rank 0 moves data; rank 1's heap is the far end.
local function measure(blocks, threads, in_flight)
  local mod = module_for(in_flight)
  local cfg = { grid = blocks, block = threads }
  local put = iris.bench(function() mod.push:launch(cfg, src, dst, bytes, ctx, peer) end)
  local get = iris.bench(function() mod.pull:launch(cfg, src, dst, bytes, ctx, peer) end)
  return gbs(put), gbs(get), put.iters
end

local function copy_engine()
  local peer_dst = ffi.cast("char*", ffi.C.iris_heap_base(peer)) + dst:offset()
  local own_src = ffi.cast("char*", ffi.C.iris_heap_base(ctx.rank)) + src:offset()
  return gbs(iris.bench(function() assert(ffi.C.iris_copy_device(peer_dst, own_src, bytes) == 0) end))
end

ctx:barrier()
if ctx.rank == 0 then
  local engine = copy_engine()
  if arg[2] == "sweep" then
    print(("backend %s, %s one way; copy engine (copy_device to the peer's heap) %.1f GB/s"):format(ctx.backend,
      size_text, engine))
    print(("%7s %7s %9s %10s %8s %10s %8s"):format("blocks", "threads", "in flight", "put GB/s", "x engine",
      "get GB/s", "x engine"))
    local shapes = backend == "cpu" and { blocks = { 8, 64 }, threads = { 64, 256 }, in_flight = { 4, 8 } }
      or { blocks = { 1056, 2112, 4224 }, threads = { 256, 512, 1024 }, in_flight = { 4, 8, 16 } }
    for _, in_flight in ipairs(shapes.in_flight) do
      for _, blocks in ipairs(shapes.blocks) do
        for _, threads in ipairs(shapes.threads) do
          -- More loads in flight use more registers: the largest blocks may not launch at all.
          local ok, put, get = pcall(measure, blocks, threads, in_flight)
          if ok then
            print(("%7d %7d %9d %10.1f %8.3f %10.1f %8.3f"):format(blocks, threads, in_flight, put, put / engine, get,
              get / engine))
          else
            print(("%7d %7d %9d  does not launch: %s"):format(blocks, threads, in_flight, tostring(put):match("[^\n]*")))
          end
        end
      end
    end
  else
    local blocks = tonumber(arg[2]) or (backend == "cpu" and 8 or 2112)
    local threads = tonumber(arg[3]) or (backend == "cpu" and 64 or 512)
    local in_flight = tonumber(arg[4]) or 4
    local put, get, iters = measure(blocks, threads, in_flight)
    print(("backend %s, %s one way, %d blocks x %d threads, %d loads in flight (median of %d):"):format(ctx.backend,
      size_text, blocks, threads, in_flight, iters))
    print(("  copy engine (copy_device to the peer's heap)  %8.1f GB/s"):format(engine))
    print(("  put_block (rank 0 -> rank 1)                  %8.1f GB/s  = %.3f x copy engine"):format(put, put / engine))
    print(("  get_block (rank 1 -> rank 0)                  %8.1f GB/s  = %.3f x copy engine"):format(get, get / engine))
  end
end
ctx:barrier()
