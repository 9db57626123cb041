-- Lab 01, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 01 labs/01-heap/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// addrs[r] = where rank r's copy of *p is, as this rank sees it (one thread per rank).
__global__ void where(const float* p, uint64_t* addrs, iris::Context ctx) {
  const int r = threadIdx.x;
  if (r >= ctx.world_size) return;
  const uint64_t* hb = ctx.heap_bases;
  const uint64_t offset = reinterpret_cast<uint64_t>(p) - hb[ctx.rank];  // the same on every rank
  addrs[r] = hb[r] + offset;                                             // = iris::translate(p, rank, r, hb)
}

// Every rank writes its k values `mine` into slice ctx.rank of every rank's `all` (k * world_size).
__global__ void gather(const int* mine, int* all, long k, iris::Context ctx) {
  const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= k) return;
  for (int r = 0; r < ctx.world_size; ++r) ctx.store(all + ctx.rank * k + i, mine[i], r);
}
]]

local lab = {}

function lab.where(t, addrs)
  mod.where:launch({ grid = 1, block = 64 }, t, addrs, ctx)
end

function lab.gather(mine, all)
  local k = mine:numel()
  mod.gather:launch({ grid = iris.cdiv(k, 256), block = 256 }, mine, all, k, ctx)
end

return lab
