-- Experiment (docs/perf.md, "Copies between the GPUs"): can Hopper's in-SM bulk copy unit (TMA,
-- cp.async.bulk through shared memory) move put/get over NVLink closer to the copy engine than
-- put_block's 16-byte load/store loop? Measured on 2 x H200: no, it plateaus at 0.74 x the copy engine
-- against 0.94-0.95 x for put_block/get_block, so put_block stays as it is. Kept to rerun on new hardware;
-- NVIDIA sm_90 or newer only (inline PTX), not part of the test suite:
--   IRIS_BACKEND=cuda mpirun -np 2 iris-lua docs/experiments/bulk_copy_tma.lua
local ffi = require "ffi"
local bytes = 1024 * 1024 * 1024
local ctx = iris.init { heap_size = 2 * bytes + 64 * 1024 * 1024 }
if ctx.backend ~= "cuda" or ctx.world_size ~= 2 then
  error("this experiment runs on the cuda backend (an sm_90 or newer GPU) at 2 ranks; got " .. ctx.backend .. " at "
    .. ctx.world_size .. " rank(s): IRIS_BACKEND=cuda mpirun -np 2 iris-lua " .. arg[0])
end
local source = [[
__device__ void share(size_t n, size_t* start, size_t* count) {
  const size_t chunk = ((n + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
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
// streaming-hint loop
__device__ void hint_copy(const uint4* s, uint4* d, size_t n) {
  size_t t = threadIdx.x, stride = blockDim.x, i = t;
  for (; i + 7 * stride < n; i += 8 * stride) {
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = __ldcs(s + i + k * stride);
#pragma unroll
    for (int k = 0; k < 8; ++k) __stcs(d + i + k * stride, v[k]);
  }
  for (; i < n; i += stride) d[i] = s[i];
}
__global__ void push_hint(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer) {
  size_t start, count; share(n, &start, &count);
  hint_copy((const uint4*)(src + start), (uint4*)ctx.translate(dst + start, peer), count / 16);
}
__global__ void pull_hint(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer) {
  size_t start, count; share(n, &start, &count);
  hint_copy((const uint4*)ctx.translate(src + start, peer), (uint4*)(dst + start), count / 16);
}
// TMA: one thread per block streams its share through `stages` shared-memory buffers of `chunk` bytes.
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bulk_load(void* buf, const void* g, unsigned bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem(buf)), "l"(g), "r"(bytes), "r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void bulk_store(void* g, const void* buf, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(g), "r"(smem(buf)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void wait_parity(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(bar)), "r"(parity) : "memory");
  }
}
__device__ void tma_copy(const uint8_t* src, uint8_t* dst, size_t count, int stages, int chunk) {
  extern __shared__ __align__(128) uint8_t buf[];
  __shared__ __align__(8) uint64_t full[8];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&full[s])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t chunks = (count + chunk - 1) / chunk;
  auto bytes_of = [&](size_t i) { size_t off = i * chunk; return (unsigned)(count - off < chunk ? count - off : chunk); };
  for (size_t i = 0; i < chunks && i < (size_t)stages; ++i)
    bulk_load(buf + i * chunk, src + i * chunk, bytes_of(i), &full[i]);
  for (size_t i = 0; i < chunks; ++i) {
    const int s = (int)(i % stages);
    wait_parity(&full[s], (unsigned)((i / stages) & 1));
    bulk_store(dst + i * chunk, buf + s * chunk, bytes_of(i));
    if (i >= 1 && i - 1 + stages < chunks) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      const size_t j = i - 1 + stages;
      bulk_load(buf + ((i - 1) % stages) * chunk, src + j * chunk, bytes_of(j), &full[(i - 1) % stages]);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
__global__ void push_tma(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer, int stages, int chunk) {
  size_t start, count; share(n, &start, &count);
  tma_copy(src + start, ctx.translate(dst + start, peer), count, stages, chunk);
}
__global__ void pull_tma(const uint8_t* src, uint8_t* dst, size_t n, iris::Context ctx, int peer, int stages, int chunk) {
  size_t start, count; share(n, &start, &count);
  tma_copy(ctx.translate(src + start, peer), dst + start, count, stages, chunk);
}
]]
local mod = iris.compile(source, { defines = { IRIS_BLOCK_COPY_UNROLL = 8 } })
local src = ctx:zeros(bytes, "uint8")
local dst = ctx:zeros(bytes, "uint8")
local peer = 1
local function gbs(r) return bytes / (r.median_ms * 1e-3) / 1e9 end
ctx:barrier()
if ctx.rank == 0 then
  local peer_dst = ffi.cast("char*", ffi.C.iris_heap_base(peer)) + dst:offset()
  local own_src = ffi.cast("char*", ffi.C.iris_heap_base(ctx.rank)) + src:offset()
  local engine = gbs(iris.bench(function() assert(ffi.C.iris_copy_device(peer_dst, own_src, bytes) == 0) end))
  print(("copy engine %.1f GB/s"):format(engine))
  local function line(label, fput, fget)
    local okp, put = pcall(function() return gbs(iris.bench(fput)) end)
    local okg, get = pcall(function() return gbs(iris.bench(fget)) end)
    print(("%-34s put %s   get %s"):format(label,
      okp and ("%7.1f %.3fx"):format(put, put / engine) or tostring(put):match("[^\n]*"),
      okg and ("%7.1f %.3fx"):format(get, get / engine) or tostring(get):match("[^\n]*")))
  end
  for _, blocks in ipairs { 2112, 4224 } do
    local cfg = { grid = blocks, block = 512 }
    line(("put_block %d x 512 x 8"):format(blocks), function() mod.push:launch(cfg, src, dst, bytes, ctx, peer) end,
      function() mod.pull:launch(cfg, src, dst, bytes, ctx, peer) end)
    line(("hint loop %d x 512 x 8"):format(blocks), function() mod.push_hint:launch(cfg, src, dst, bytes, ctx, peer) end,
      function() mod.pull_hint:launch(cfg, src, dst, bytes, ctx, peer) end)
  end
  for _, blocks in ipairs { 132, 264, 528 } do
    for _, chunk in ipairs { 8192, 16384, 32768 } do
      for _, stages in ipairs { 2, 4, 6 } do
        local shared = chunk * stages
        if shared * (blocks / 132) <= 220 * 1024 and shared <= 200 * 1024 then
          local cfg = { grid = blocks, block = 32, shared = shared }
          line(("tma %d blocks, %d x %d KiB"):format(blocks, stages, chunk / 1024),
            function() mod.push_tma:launch(cfg, src, dst, bytes, ctx, peer, stages, chunk) end,
            function() mod.pull_tma:launch(cfg, src, dst, bytes, ctx, peer, stages, chunk) end)
        end
      end
    end
  end
end
ctx:barrier()
-- Correctness of one TMA shape each way: a byte pattern in src on both ranks, checked on the receiving rank.
local check_src = [[
__global__ void pattern(uint8_t* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (uint8_t)(i * 7 + 3);
}
__global__ void mismatches(const uint8_t* p, size_t n, int* bad) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    if (p[i] != (uint8_t)(i * 7 + 3)) atomicAdd(bad, 1);
}
]]
local cm = iris.compile(check_src)
local bad = ctx:zeros(1, "int32")
local flat = { grid = 1056, block = 256 }
cm.pattern:launch(flat, src, bytes)
dst:fill(0)
ctx:barrier()
local cfg = { grid = 264, block = 32, shared = 4 * 32768 }
if ctx.rank == 0 then mod.push_tma:launch(cfg, src, dst, bytes, ctx, peer, 4, 32768) end
ctx:barrier()
if ctx.rank == 1 then cm.mismatches:launch(flat, dst, bytes, bad); print("tma put: bytes wrong on rank 1: " .. bad:get(1)) end
ctx:barrier()
dst:fill(0); bad:fill(0)
ctx:barrier()
if ctx.rank == 0 then
  mod.pull_tma:launch(cfg, src, dst, bytes, ctx, peer, 4, 32768)
  cm.mismatches:launch(flat, dst, bytes, bad); print("tma get: bytes wrong on rank 0: " .. bad:get(1))
end
ctx:barrier()
print("done")
