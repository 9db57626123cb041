-- compile_bench: a kernel's cold compile (NVRTC on cuda, hiprtc on hip, the host compiler on cpu) against a disk-cache hit, same run.
--   iris-lua scripts/bench/compile_bench.lua [hits] [--csv FILE] [--json FILE]
local ffi = require "ffi"
local opts = iris.options(arg, {
  name = "compile_bench",
  about = "a kernel's cold compile against a disk-cache hit, same run",
  positional = { { "hits", 10, "compiles that hit the disk cache, timed", type = "integer", min = 1 } },
})
if not opts then return end
local ctx = iris.init {}
local hits = opts.hits

local source = [[
__global__ void put_ones(float* buf, long n, iris::Context ctx, int dst) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) ctx.store(buf + i, 1.0f, dst);
}
]]
local function now() return ffi.C.iris_wall_time() end

-- A define no earlier run used makes the first compile a miss; compiles from other chunks (other
-- origins) of the same source and define are then disk-cache hits.
local stamp = ("%d_%d"):format(os.time(), math.floor(now() * 1e6) % 1000000)
local compile_opts = { defines = { IRIS_BENCH_STAMP = stamp .. "_" .. ctx.rank } }
local start = now()
iris.compile(source, compile_opts)
local cold_ms = (now() - start) * 1e3

local times = {}
for i = 1, hits do
  -- (not a tail call: the chunk must stay on the stack to be the compile's origin)
  local compile_elsewhere = assert(loadstring("local m = iris.compile(...) return m", "=hit" .. i))
  start = now()
  compile_elsewhere(source, compile_opts)
  times[i] = (now() - start) * 1e3
end
table.sort(times)
local hit_ms = times[math.floor((hits + 1) / 2)]
print(("rank %d, backend %s: cold compile %.1f ms, cache hit %.2f ms (median of %d): cold / hit = %.0fx"):format(
  ctx.rank, ctx.backend, cold_ms, hit_ms, hits, cold_ms / hit_ms))
iris.options.write(opts, { { rank = ctx.rank, cold_ms = cold_ms, hit_ms = hit_ms, hits = hits } },
  { setting = { ranks = ctx.world_size, backend = ctx.backend, device = ctx.device_name } })
