-- Lab 08, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 08 labs/08-gemm/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
#define TILE 16

// C = A B with A's rows split among the ranks: this rank holds m rows of A (m x k) and all of B
// (k x n); every rank's C ((world_size * m) x n) gets this rank's rows, at row ctx.rank * m. A block
// computes one TILE x TILE tile of this rank's rows at a time (A and B through shared memory, TILE
// columns of A and rows of B per round), and sends the tile to every rank as soon as it is done.
__global__ void gemm_all_gather(const float* a, const float* b, float* c, int m, int n, int k, iris::Context ctx) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tiles_n = (n + TILE - 1) / TILE, tiles = (m + TILE - 1) / TILE * tiles_n;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int row = t / tiles_n * TILE + ty, col = t % tiles_n * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
      as[ty][tx] = row < m && k0 + tx < k ? a[(long)row * k + k0 + tx] : 0.0f;
      bs[ty][tx] = k0 + ty < k && col < n ? b[(long)(k0 + ty) * n + col] : 0.0f;
      __syncthreads();
      for (int kk = 0; kk < TILE; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();
    }
    if (row < m && col < n) {
      float* at = c + ((long)ctx.rank * m + row) * n + col;
      for (int r = 0; r < ctx.world_size; ++r) ctx.store(at, acc, r);  // the tile leaves as soon as it is done
    }
  }
}
]]

local TILE = 16
local lab = {}

-- a: m x k (this rank's rows), b: k x n (the same on every rank), c: (world_size * m) x n.
function lab.gemm_all_gather(c, a, b)
  local m, k, n = a:shape()[1], a:shape()[2], b:shape()[2]
  local tiles = iris.cdiv(m, TILE) * iris.cdiv(n, TILE)
  mod.gemm_all_gather:launch({ grid = math.min(tiles, 1024), block = { TILE, TILE } }, a, b, c, m, n, k, ctx)
end

return lab
