-- bandwidth_bench: put_block/get_block between two ranks' devices against the copy engine (Backend::copy_device to the peer's mapped heap), same run.
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] [blocks] [threads] [loads in flight]
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] sweep
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] sizes [--plot FILE]
--   mpirun -np 2 iris-lua scripts/bench/bandwidth_bench.lua [size] sms
-- size: default 1GiB (cpu: 64MiB); blocks 2112 (16 per SM of a 132-SM GPU; cpu: 8); threads 512 (cpu:
-- 64); loads in flight per thread 4 (IRIS_BLOCK_COPY_UNROLL). "sweep" measures a grid of those three and prints one
-- line each, so one run finds the best shape. "sizes" measures every power of 4 from 4 KiB up to size with
-- the default shape, and --plot FILE draws the three lines (GB/s against size; .svg, or .png where a converter is).
-- "sms" measures what a few SMs move: 1, 2, 4 ... blocks (one per SM, up to all of them), the plain forms
-- (1024 threads, 8 loads in flight) beside the staged ones (put_block/get_block with an iris::Staging
-- buffer: the bulk-copy unit on sm_90+), and prints GB/s per SM against the copy engine.
-- --csv FILE and --json FILE write every measurement (iris.options).
local ffi = require "ffi"
local opts = iris.options(arg, {
  name = "bandwidth_bench",
  about = "put_block/get_block between two ranks' devices against the copy engine, same run",
  usage = "mpirun -np 2 iris-lua " .. arg[0] .. " [size] [blocks | sweep | sizes | sms] [threads] [loads in flight] [options]",
  positional = {
    { "size", "64MiB", "bytes moved one way", type = "bytes", gpu = "1GiB" },
    { "mode", "", "blocks per launch (default: 8 on cpu, 2112 on GPUs), or sweep, sizes or sms", type = "string" },
    { "threads", 64, "threads per block", type = "integer", min = 1, max = 1024, gpu = 512 },
    { "in_flight", 4, "loads in flight per thread (IRIS_BLOCK_COPY_UNROLL)", type = "integer", min = 1 },
  },
  options = { { "plot", nil, "with sizes: draw the three lines into FILE (.svg; .png where a converter is)", type = "plot" } },
})
if not opts then return end
local mode = opts.mode
local default_blocks = opts.gpu and 2112 or 8
if mode ~= "sweep" and mode ~= "sizes" and mode ~= "sms" and mode ~= "" and not (tonumber(mode) and tonumber(mode) >= 1 and tonumber(mode) % 1 == 0) then
  iris.options.usage_error("the second argument is a number of blocks, sweep, sizes or sms, got '%s'", mode)
end
local bytes = opts.size
local size_text = iris.plot.bytes_text(bytes)
if iris.world_size() < 2 then iris.options.usage_error("needs 2 ranks: mpirun -np 2 iris-lua %s", arg[0]) end
local ctx = iris.init { heap_size = 2 * bytes + 64 * 1024 * 1024 }
local results = {} -- one record per measurement, for --csv and --json
local function setting() return { ranks = ctx.world_size, backend = ctx.backend, device = ctx.device_name } end

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
// The staged forms, through `staging` bytes of dynamic shared memory (the bulk-copy unit on sm_90+).
extern __shared__ __align__(128) unsigned char staging_buffer[];
__global__ void push_staged(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer, unsigned staging) {
  size_t start, count; share(n, &start, &count);
  ctx.put_block(src + start, dst + start, count, peer, iris::Staging{staging_buffer, staging});
}
__global__ void pull_staged(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer, unsigned staging) {
  size_t start, count; share(n, &start, &count);
  ctx.get_block(src + start, dst + start, count, peer, iris::Staging{staging_buffer, staging});
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

-- Every power of 4 from 4 KiB to `bytes`, and `bytes` itself: one line each, and the three lines drawn.
local function sizes_sweep(blocks, threads)
  local sizes = {}
  local s = 4096
  while s <= bytes do
    sizes[#sizes + 1] = s
    s = s * 4
  end
  if sizes[#sizes] ~= bytes then sizes[#sizes + 1] = bytes end
  print(("backend %s, one way, %d blocks x %d threads, 4 loads in flight (GB/s, median of each)"):format(ctx.backend,
    blocks, threads))
  print(("%12s %10s %10s %12s"):format("size", "put_block", "get_block", "copy engine"))
  local put_line, get_line, engine_line = {}, {}, {}
  local progress = iris.progress(#sizes)
  local mod = module_for(4)
  for _, n in ipairs(sizes) do
    progress:step("%s", iris.plot.bytes_text(n))
    local cfg = { grid = math.max(1, math.min(blocks, math.ceil(n / (threads * 16)))), block = threads }
    local put = n / (iris.bench(function() mod.push:launch(cfg, src, dst, n, ctx, peer) end).median_ms * 1e-3) / 1e9
    local get = n / (iris.bench(function() mod.pull:launch(cfg, src, dst, n, ctx, peer) end).median_ms * 1e-3) / 1e9
    local peer_dst = ffi.cast("char*", ffi.C.iris_heap_base(peer)) + dst:offset()
    local own_src = ffi.cast("char*", ffi.C.iris_heap_base(ctx.rank)) + src:offset()
    local engine = n / (iris.bench(function() assert(ffi.C.iris_copy_device(peer_dst, own_src, n) == 0) end).median_ms
      * 1e-3) / 1e9
    put_line[#put_line + 1], get_line[#get_line + 1], engine_line[#engine_line + 1] = { n, put }, { n, get }, { n, engine }
    results[#results + 1] = { bytes = n, blocks = cfg.grid, threads = threads, in_flight = 4, put_gbs = put,
      get_gbs = get, engine_gbs = engine }
    print(("%12s %10.2f %10.2f %12.2f"):format(iris.plot.bytes_text(n), put, get, engine))
  end
  progress:finish()
  if opts.plot then
    iris.plot.save(opts.plot, iris.plot.lines {
      title = ("put_block / get_block against the copy engine, rank 0 -> rank 1 (%s backend)"):format(ctx.backend),
      x_label = "bytes moved", y_label = "GB/s", x_scale = "log2", x_text = iris.plot.bytes_text,
      series = { { name = "put_block", points = put_line }, { name = "get_block", points = get_line },
        { name = "copy engine", points = engine_line } },
    })
    print(("plot: 3 lines drawn into %s"):format(opts.plot))
  end
end

-- What 1, 2, 4 ... blocks move, one per SM: the plain forms at their fullest block against the staged
-- forms at two buffer sizes. GB/s per SM is the figure that says how few SMs a fused kernel can give
-- its communication.
local function sms_sweep(engine)
  local sms = ctx:get_cu_count()
  local counts, c = {}, 1
  while c < sms do
    counts[#counts + 1] = c
    c = c * 2
  end
  counts[#counts + 1] = sms
  local plain_threads = opts.gpu and 1024 or 64
  local stagings = opts.gpu and { 48 * 1024, 192 * 1024 } or { 4096 }
  local mod = module_for(8)
  print(("backend %s, %s one way, blocks one per SM (%d SMs); copy engine %.1f GB/s"):format(ctx.backend, size_text,
    sms, engine))
  print(("plain: put_block/get_block, %d threads, 8 loads in flight; staged: the same with an iris::Staging buffer " ..
    "(128 threads)"):format(plain_threads))
  print(("%6s %-16s %9s %8s %8s %9s %8s %8s"):format("blocks", "form", "put GB/s", "per SM", "x engine", "get GB/s",
    "per SM", "x engine"))
  local progress = iris.progress(#counts * (1 + #stagings))
  for _, blocks in ipairs(counts) do
    local forms = { { name = "plain", cfg = { grid = blocks, block = plain_threads }, put = mod.push, get = mod.pull } }
    for _, bytes_staged in ipairs(stagings) do
      forms[#forms + 1] = { name = ("staged %s"):format(iris.plot.bytes_text(bytes_staged)), staging = bytes_staged,
        cfg = { grid = blocks, block = 128, shared = bytes_staged }, put = mod.push_staged, get = mod.pull_staged }
    end
    for _, form in ipairs(forms) do
      progress:step("%d blocks, %s", blocks, form.name)
      local function launch(k)
        if form.staging then k:launch(form.cfg, src, dst, bytes, ctx, peer, form.staging)
        else k:launch(form.cfg, src, dst, bytes, ctx, peer) end
      end
      local put = gbs(iris.bench(function() launch(form.put) end))
      local get = gbs(iris.bench(function() launch(form.get) end))
      results[#results + 1] = { bytes = bytes, blocks = blocks, threads = form.cfg.block, in_flight = 8,
        form = form.name, put_gbs = put, get_gbs = get, engine_gbs = engine }
      print(("%6d %-16s %9.1f %8.2f %8.3f %9.1f %8.2f %8.3f"):format(blocks, form.name, put, put / blocks,
        put / engine, get, get / blocks, get / engine))
    end
  end
  progress:finish()
end

ctx:barrier()
if ctx.rank == 0 and mode == "sizes" then
  sizes_sweep(default_blocks, opts.threads)
elseif ctx.rank == 0 and mode == "sms" then
  sms_sweep(copy_engine())
elseif ctx.rank == 0 then
  local engine = copy_engine()
  if mode == "sweep" then
    print(("backend %s, %s one way; copy engine (copy_device to the peer's heap) %.1f GB/s"):format(ctx.backend,
      size_text, engine))
    print(("%7s %7s %9s %10s %8s %10s %8s"):format("blocks", "threads", "in flight", "put GB/s", "x engine",
      "get GB/s", "x engine"))
    local shapes = ctx.backend == "cpu" and { blocks = { 8, 64 }, threads = { 64, 256 }, in_flight = { 4, 8 } }
      or { blocks = { 1056, 2112, 4224 }, threads = { 256, 512, 1024 }, in_flight = { 4, 8, 16 } }
    local progress = iris.progress(#shapes.in_flight * #shapes.blocks * #shapes.threads)
    for _, in_flight in ipairs(shapes.in_flight) do
      for _, blocks in ipairs(shapes.blocks) do
        for _, threads in ipairs(shapes.threads) do
          progress:step("%d blocks x %d threads, %d in flight", blocks, threads, in_flight)
          -- More loads in flight use more registers: the largest blocks may not launch at all.
          local ok, put, get = pcall(measure, blocks, threads, in_flight)
          results[#results + 1] = { bytes = bytes, blocks = blocks, threads = threads, in_flight = in_flight,
            put_gbs = ok and put or nil, get_gbs = ok and get or nil, engine_gbs = engine, launched = ok }
          if ok then
            print(("%7d %7d %9d %10.1f %8.3f %10.1f %8.3f"):format(blocks, threads, in_flight, put, put / engine, get,
              get / engine))
          else
            print(("%7d %7d %9d  does not launch: %s"):format(blocks, threads, in_flight, tostring(put):match("[^\n]*")))
          end
        end
      end
    end
    progress:finish()
  else
    local blocks = tonumber(mode) or default_blocks
    local threads, in_flight = opts.threads, opts.in_flight
    local put, get, iters = measure(blocks, threads, in_flight)
    results[#results + 1] = { bytes = bytes, blocks = blocks, threads = threads, in_flight = in_flight, put_gbs = put,
      get_gbs = get, engine_gbs = engine }
    print(("backend %s, %s one way, %d blocks x %d threads, %d loads in flight (median of %d):"):format(ctx.backend,
      size_text, blocks, threads, in_flight, iters))
    print(("  copy engine (copy_device to the peer's heap)  %8.1f GB/s"):format(engine))
    print(("  put_block (rank 0 -> rank 1)                  %8.1f GB/s  = %.3f x copy engine"):format(put, put / engine))
    print(("  get_block (rank 1 -> rank 0)                  %8.1f GB/s  = %.3f x copy engine"):format(get, get / engine))
  end
end
iris.options.write(opts, results, { setting = setting(),
  columns = { "bytes", "blocks", "threads", "in_flight", "form", "put_gbs", "get_gbs", "engine_gbs", "launched" } })
ctx:barrier()
