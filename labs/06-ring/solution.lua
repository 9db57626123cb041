-- Lab 06, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 06 labs/06-ring/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// Chunk c of n elements (0 <= c < W): [chunk_begin(n, c, W), chunk_begin(n, c + 1, W)).
__device__ long chunk_begin(long n, int c, int W) { return n * c / W; }

// Two-shot: rank r reduces chunk r, reading every rank's inp there, and writes the sums into every
// rank's out. Every rank's inp is ready when it is called; the caller's barrier afterwards makes every
// out whole.
__global__ void two_shot(const float* inp, float* out, long n, iris::Context ctx) {
  const int W = ctx.world_size;
  const long begin = chunk_begin(n, ctx.rank, W), end = chunk_begin(n, ctx.rank + 1, W);
  for (long i = begin + blockIdx.x * (long)blockDim.x + threadIdx.x; i < end; i += (long)gridDim.x * blockDim.x) {
    float sum = 0.0f;
    for (int r = 0; r < W; ++r) sum += ctx.load(inp + i, r);
    for (int r = 0; r < W; ++r) ctx.store(out + i, sum, r);
  }
}

// Ring: block b of every rank handles slice b of every chunk; flags[b] counts its steps from `base`.
// Reduce-scatter: at step s (0 .. W-2) rank r adds its inp to the partial sum of chunk (r - s) mod W
// that arrived from rank r - 1 (none at step 0) and stores it into rank r + 1's stage[s]. Then chunk
// (r + 1) mod W is complete here. All-gather: at step s rank r stores the final chunk (r + 1 - s) mod W
// into rank r + 1's out.
__global__ void ring(const float* inp, float* out, float* stage, uint64_t* flags, long n, uint64_t base,
                     iris::Context ctx) {
  const int W = ctx.world_size, r = ctx.rank, next = (r + 1) % W;
  const long max_chunk = (n + W - 1) / W;
  uint64_t* flag = flags + blockIdx.x;
  // This block's slice of chunk c: [lo, hi), and where the chunk begins.
  auto slice = [&](int c, long* begin, long* lo, long* hi) {
    *begin = chunk_begin(n, c, W);
    const long length = chunk_begin(n, c + 1, W) - *begin, per_block = (length + gridDim.x - 1) / gridDim.x;
    *lo = *begin + blockIdx.x * per_block;
    *hi = *lo + per_block < *begin + length ? *lo + per_block : *begin + length;
  };
  auto wait_for = [&](uint64_t value) {
    if (threadIdx.x == 0) ctx.wait_until(flag, iris::Cmp::ge, value);
    __syncthreads();
  };
  auto signal_next = [&](uint64_t value) {
    __syncthreads();  // every thread's stores, then one release
    if (threadIdx.x == 0) ctx.signal_set(flag, value, next);
  };
  long begin, lo, hi;
  for (int s = 0; s < W - 1; ++s) {
    const int c = ((r - s) % W + W) % W;
    if (s > 0) wait_for(base + s);
    slice(c, &begin, &lo, &hi);
    for (long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const float partial = s > 0 ? stage[(s - 1) * max_chunk + (i - begin)] : 0.0f;
      ctx.store(stage + s * max_chunk + (i - begin), partial + inp[i], next);
    }
    signal_next(base + s + 1);
  }
  const int mine = (r + 1) % W;
  if (W > 1) wait_for(base + W - 1);
  slice(mine, &begin, &lo, &hi);
  for (long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    out[i] = inp[i] + (W > 1 ? stage[(W - 2) * max_chunk + (i - begin)] : 0.0f);
  }
  for (int s = 0; s < W - 1; ++s) {
    const int c = ((r + 1 - s) % W + W) % W;
    if (s > 0) wait_for(base + W - 1 + s);
    slice(c, &begin, &lo, &hi);
    for (long i = lo + threadIdx.x; i < hi; i += blockDim.x) ctx.store(out + i, out[i], next);
    signal_next(base + W + s);
  }
  if (W > 1) wait_for(base + 2 * W - 2);  // the last chunk has arrived: out is whole here
}
]]

local BLOCK, MAX_BLOCKS = 256, 64
local function blocks(elements) return math.max(1, math.min(iris.cdiv(elements, BLOCK), MAX_BLOCKS)) end

local lab = {}

function lab.two_shot(out, inp)
  local n = inp:numel()
  mod.two_shot:launch({ grid = blocks(iris.cdiv(n, ctx.world_size)), block = BLOCK }, inp, out, n, ctx)
end

-- The ring's own memory, per size: W - 1 chunks of stage and a flag per block, symmetric (every rank
-- calls with the same n at the same time, so the allocations match). Flags are never reset: each call
-- counts on from where the last one ended.
local stages, flags, calls = {}, ctx:zeros(MAX_BLOCKS, "uint64"), 0

function lab.ring(out, inp)
  local n, W = inp:numel(), ctx.world_size
  local max_chunk = iris.cdiv(n, W)
  stages[n] = stages[n] or ctx:zeros(math.max(1, (W - 1) * max_chunk))
  local base = calls * (2 * W - 2)
  calls = calls + 1
  mod.ring:launch({ grid = blocks(max_chunk), block = BLOCK }, inp, out, stages[n], flags, n, base, ctx)
end

return lab
