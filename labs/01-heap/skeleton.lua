-- Lab 01: ranks, the symmetric heap, offsets, heap_bases and pointer translation.
-- Fill in the places marked TODO; 01-heap.md explains each. Check your file with
--   mpirun -np 2 iris-lua lab check 01 01-heap.lua     (and -np 4; one rank works too)
-- The checker calls the functions this file returns, on every rank, with inputs of its own.
local ctx = iris.init {}

local mod = iris.compile [[
// addrs[r] = where rank r's copy of *p is, as this rank sees it (one thread per rank).
__global__ void where(const float* p, uint64_t* addrs, iris::Context ctx) {
  const int r = threadIdx.x;
  if (r >= ctx.world_size) return;
  const uint64_t* hb = ctx.heap_bases;  // hb[q]: where this rank sees rank q's heap begin
  // TODO(lab 01): addrs[r] = rank r's heap base plus p's offset in this rank's heap
}

// Every rank writes its k values `mine` into slice ctx.rank of every rank's `all` (k * world_size).
__global__ void gather(const int* mine, int* all, long k, iris::Context ctx) {
  const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= k) return;
  for (int r = 0; r < ctx.world_size; ++r) {
    // TODO(lab 01): store mine[i] into element ctx.rank * k + i of rank r's `all`
  }
}
]]

local lab = {}

-- addrs: a uint64 tensor of world_size entries; t: a float32 tensor on the heap.
function lab.where(t, addrs)
  mod.where:launch({ grid = 1, block = 64 }, t, addrs, ctx)
end

-- mine: k int32 on every rank; all: k * world_size int32. Every rank calls it at once.
function lab.gather(mine, all)
  local k = mine:numel()
  -- TODO(lab 01): a grid that covers all k elements with blocks of 256 threads (iris.cdiv helps)
  mod.gather:launch({ grid = 1, block = 256 }, mine, all, k, ctx)
end

return lab
