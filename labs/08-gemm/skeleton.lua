-- Lab 08: a GEMM whose tiles go to the other ranks as soon as they are computed.
-- Fill in the places marked TODO; 08-gemm.md explains each. Check your file with
--   mpirun -np 2 iris-lua lab check 08 08-gemm.lua     (and -np 4; one rank works too)
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
      // TODO(lab 08): each thread loads one element of A's tile (row, k0 + tx) and one of B's (k0 + ty, col)
      // into as and bs (0 outside the matrices), the block synchronizes, every thread adds its row of as
      // times its column of bs to acc, and the block synchronizes again before the next round
      __syncthreads();
      __syncthreads();
    }
    if (row < m && col < n) {
      float* at = c + ((long)ctx.rank * m + row) * n + col;
      // TODO(lab 08): store acc at `at` in every rank's c, this rank's included
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
