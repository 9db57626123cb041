-- Lab 02, a reference solution (for teachers; docs/labs/README.md): 16-byte accesses (float4) for the
-- bulk, floats for the tail. Check it with
--   mpirun -np 2 iris-lua lab check 02 labs/02-remote/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// Tensors start 256-byte aligned, so float4 accesses at multiples of 4 floats are aligned.
__global__ void read_remote(float* dst, const float* src, long n, int from, iris::Context ctx) {
  const long first = blockIdx.x * (long)blockDim.x + threadIdx.x, stride = (long)gridDim.x * blockDim.x;
  const long n4 = n / 4;
  const float4* src4 = reinterpret_cast<const float4*>(src);
  float4* dst4 = reinterpret_cast<float4*>(dst);
  for (long i = first; i < n4; i += stride) dst4[i] = ctx.load(src4 + i, from);
  for (long i = 4 * n4 + first; i < n; i += stride) dst[i] = ctx.load(src + i, from);
}

__global__ void write_remote(const float* src, float* dst, long n, int to, iris::Context ctx) {
  const long first = blockIdx.x * (long)blockDim.x + threadIdx.x, stride = (long)gridDim.x * blockDim.x;
  const long n4 = n / 4;
  const float4* src4 = reinterpret_cast<const float4*>(src);
  float4* dst4 = reinterpret_cast<float4*>(dst);
  for (long i = first; i < n4; i += stride) ctx.store(dst4 + i, src4[i], to);
  for (long i = 4 * n4 + first; i < n; i += stride) ctx.store(dst + i, src[i], to);
}
]]

local BLOCK = 256
local function grid(n) return math.max(1, math.min(iris.cdiv(n, 4 * BLOCK), 1024)) end

local lab = {}

function lab.read(dst, src, from)
  local n = dst:numel()
  mod.read_remote:launch({ grid = grid(n), block = BLOCK }, dst, src, n, from, ctx)
end

function lab.write(src, dst, to)
  local n = src:numel()
  mod.write_remote:launch({ grid = grid(n), block = BLOCK }, src, dst, n, to, ctx)
end

return lab
