-- Device ops between every pair of ranks: load, store, get, put, copy and the block copies, for int8,
-- float16, bfloat16 and float32 and odd sizes (Iris's device-op suite, issue 4).
local ctx = iris.init {}
local rank, world = ctx.rank, ctx.world_size

local CTYPES = { int8 = "int8_t", float16 = "iris::half", bfloat16 = "iris::bfloat16", float32 = "float" }
local DTYPES = { "int8", "float16", "bfloat16", "float32" }
local SIZES = { 1, 7, 4099, 65536 }

-- The value rank r holds at index i: a small integer, exact in every tested type.
local function pattern(r, i) return (r * 37 + i) % 100 - 50 end

-- Device helpers are templates; the kernels are written out per type (instances of a template kernel
-- would each recompile the module: see docs/kernels.md).
local helpers = [[
template <typename T> __device__ T pattern(int rank, long i) {
  return static_cast<T>(static_cast<float>((rank * 37 + i) % 100 - 50));
}
__device__ long element() { return static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; }
// This block's share of n elements: chunks that are not multiples of 16 bytes, so the block copies
// meet unaligned heads and tails.
__device__ void block_share(long n, long* start, long* count) {
  const long chunk = (n + gridDim.x - 1) / gridDim.x;
  *start = blockIdx.x * chunk;
  *count = *start >= n ? 0 : (n - *start < chunk ? n - *start : chunk);
}
]]
local template = [[
__global__ void fill_SUFFIX(T* x, long n, int rank) { long i = element(); if (i < n) x[i] = pattern<T>(rank, i); }
// Pushes: rank r writes row r of dst on `peer`.
__global__ void store_SUFFIX(T* dst, long n, iris::Context ctx, int peer) {
  long i = element();
  if (i < n) iris::store(dst + ctx.rank * n + i, pattern<T>(ctx.rank, i), ctx.rank, peer, ctx.heap_bases);
}
__global__ void put_SUFFIX(const T* src, T* dst, long n, iris::Context ctx, int peer) {
  long i = element(); if (i < n) ctx.put(src + i, dst + ctx.rank * n + i, peer);
}
__global__ void copy_push_SUFFIX(const T* src, T* dst, long n, iris::Context ctx, int peer) {
  long i = element(); if (i < n) ctx.copy(src + i, dst + ctx.rank * n + i, ctx.rank, peer);
}
__global__ void put_block_SUFFIX(const T* src, T* dst, long n, iris::Context ctx, int peer) {
  long start, count; block_share(n, &start, &count);
  ctx.put_block(src + start, dst + ctx.rank * n + start, count, peer);
}
// Pulls: rank r reads `peer`'s src into row peer of its own out.
__global__ void load_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  long i = element(); if (i < n) out[peer * n + i] = iris::load(src + i, ctx.rank, peer, ctx.heap_bases);
}
__global__ void get_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  long i = element(); if (i < n) ctx.get(src + i, out + peer * n + i, peer);
}
__global__ void copy_pull_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  long i = element(); if (i < n) iris::copy(src + i, out + peer * n + i, peer, ctx.rank, ctx.rank, ctx.heap_bases);
}
__global__ void get_block_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  long start, count; block_share(n, &start, &count);
  ctx.get_block(src + start, out + peer * n + start, count, peer);
}
__global__ void copy_block_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  long start, count; block_share(n, &start, &count);
  ctx.copy_block(src + start, out + peer * n + start, count, peer, ctx.rank);
}
// The staged forms through a small buffer (two slots of 384 bytes), so a block's share passes through
// each slot many times; on sm_90+ the bulk-copy unit moves the aligned middle.
__global__ void put_block_staged_SUFFIX(const T* src, T* dst, long n, iris::Context ctx, int peer) {
  __shared__ __align__(128) unsigned char buf[1024];
  long start, count; block_share(n, &start, &count);
  ctx.put_block(src + start, dst + ctx.rank * n + start, count, peer, iris::Staging{buf, sizeof buf});
}
__global__ void get_block_staged_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  __shared__ __align__(128) unsigned char buf[1024];
  long start, count; block_share(n, &start, &count);
  ctx.get_block(src + start, out + peer * n + start, count, peer, iris::Staging{buf, sizeof buf});
}
__global__ void copy_block_staged_SUFFIX(const T* src, T* out, long n, iris::Context ctx, int peer) {
  __shared__ __align__(128) unsigned char buf[1024];
  long start, count; block_share(n, &start, &count);
  ctx.copy_block(src + start, out + peer * n + start, count, peer, ctx.rank, iris::Staging{buf, sizeof buf});
}
]]
local source = { helpers }
for _, dtype in ipairs(DTYPES) do
  source[#source + 1] = template:gsub("SUFFIX", dtype):gsub("%f[%w]T%f[%W]", CTYPES[dtype])
end
local mod = iris.compile(table.concat(source))

local PUSHES = { "store", "put", "copy_push", "put_block", "put_block_staged" }
local PULLS = { "load", "get", "copy_pull", "get_block", "copy_block", "get_block_staged", "copy_block_staged" }
local BLOCK_OPS = { put_block = true, get_block = true, copy_block = true, put_block_staged = true,
  get_block_staged = true, copy_block_staged = true }

-- Row r of `out` (world rows of n) must hold rank r's pattern.
local function check_rows(out, n, what)
  local values = out:to_table()
  for r = 0, world - 1 do
    for i = 0, n - 1 do
      local got = tonumber(values[r * n + i + 1])
      if got ~= pattern(r, i) then
        error(("%s: rank %d, row %d, element %d: expected %d, got %s"):format(what, rank, r, i, pattern(r, i),
          tostring(got)), 2)
      end
    end
  end
end

for _, dtype in ipairs(DTYPES) do
  for _, n in ipairs(SIZES) do
    local src = ctx:zeros(n, dtype)
    mod["fill_" .. dtype]:launch({ grid = iris.cdiv(n, 256), block = 256 }, src, n, rank)
    for _, op in ipairs(PUSHES) do
      local dst = ctx:zeros({ world, n }, dtype)
      ctx:barrier() -- every rank's src filled and dst zeroed
      local k = mod[op .. "_" .. dtype]
      local cfg = BLOCK_OPS[op] and { grid = 3, block = 64 } or { grid = iris.cdiv(n, 256), block = 256 }
      for peer = 0, world - 1 do
        if op == "store" then k:launch(cfg, dst, n, ctx, peer) else k:launch(cfg, src, dst, n, ctx, peer) end
      end
      ctx:barrier() -- every rank's pushes done
      check_rows(dst, n, ("%s %s n=%d"):format(op, dtype, n))
      dst:free()
    end
    ctx:barrier()
    for _, op in ipairs(PULLS) do
      local out = ctx:zeros({ world, n }, dtype)
      local cfg = BLOCK_OPS[op] and { grid = 3, block = 64 } or { grid = iris.cdiv(n, 256), block = 256 }
      for peer = 0, world - 1 do mod[op .. "_" .. dtype]:launch(cfg, src, out, n, ctx, peer) end
      check_rows(out, n, ("%s %s n=%d"):format(op, dtype, n))
      out:free()
    end
    ctx:barrier() -- nobody frees src while another rank still reads it
    src:free()
  end
end
print(("rank %d: load/store/get/put/copy and block copies correct for %d ranks"):format(rank, world))
