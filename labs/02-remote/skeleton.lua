-- Lab 02: remote loads and stores, and a bandwidth matrix against the copy engine.
-- Fill in the places marked TODO; 02-remote.md explains each. Check your file with
--   mpirun -np 2 iris-lua lab check 02 02-remote.lua     (and -np 4; one rank works too)
local ctx = iris.init {}

local mod = iris.compile [[
// This rank's dst := rank `from`'s src (n floats), by remote loads. A grid-stride loop: any grid covers n.
__global__ void read_remote(float* dst, const float* src, long n, int from, iris::Context ctx) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    // TODO(lab 02): dst[i] = element i of rank `from`'s src
  }
}

// Rank `to`'s dst := this rank's src (n floats), by remote stores.
__global__ void write_remote(const float* src, float* dst, long n, int to, iris::Context ctx) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    // TODO(lab 02): element i of rank `to`'s dst = src[i]
  }
}
]]

local BLOCK = 256
local function grid(n) return math.max(1, math.min(iris.cdiv(n, BLOCK), 1024)) end

local lab = {}

-- dst, src: float32 tensors of n elements; from: the rank to read (0-based; may be this rank).
function lab.read(dst, src, from)
  local n = dst:numel()
  mod.read_remote:launch({ grid = grid(n), block = BLOCK }, dst, src, n, from, ctx)
end

-- src, dst: float32 tensors of n elements; to: the rank whose dst to write (may be this rank).
function lab.write(src, dst, to)
  local n = src:numel()
  mod.write_remote:launch({ grid = grid(n), block = BLOCK }, src, dst, n, to, ctx)
end

return lab
