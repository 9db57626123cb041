-- Lab 07, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 07 labs/07-jacobi/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// One Jacobi update of row i (1 <= i <= rows): every column but the first and the last.
__device__ void relax_row(const float* u, float* unew, int i, int cols) {
  for (int j = 1 + threadIdx.x; j < cols - 1; j += blockDim.x) {
    unew[i * cols + j] = 0.25f * (u[(i - 1) * cols + j] + u[(i + 1) * cols + j] + u[i * cols + j - 1] + u[i * cols + j + 1]);
  }
}

// Rows 1 .. rows, a block per row at a time (the host-driven step's sweep).
__global__ void sweep(const float* u, float* unew, int rows, int cols) {
  for (int i = 1 + blockIdx.x; i <= rows; i += gridDim.x) relax_row(u, unew, i, cols);
}

// One step with the halos sent by the device: block 0 updates the edge rows first and puts them into
// the neighbours' halo rows, raising their flags to t; every block updates the inner rows; the last
// block waits until both of this rank's halos of unew have arrived for step t, so the next step (the
// next kernel) reads whole halos. flags[0]: the top halo (from the rank above), flags[1]: the bottom.
__global__ void step_device(const float* u, float* unew, int rows, int cols, uint64_t* flags, uint64_t t,
                            iris::Context ctx) {
  const int up = ctx.rank - 1, down = ctx.rank + 1;  // no neighbour above rank 0, none below the last
  if (blockIdx.x == 0) {
    relax_row(u, unew, 1, cols);
    if (rows > 1) relax_row(u, unew, rows, cols);
    __syncthreads();
    if (up >= 0) ctx.put_block(unew + 1 * cols, unew + (rows + 1) * cols, cols, up);
    if (down < ctx.world_size) ctx.put_block(unew + rows * cols, unew, cols, down);
    __syncthreads();  // the block's puts, then one release per neighbour
    if (threadIdx.x == 0 && up >= 0) ctx.signal_set(flags + 1, t, up);
    if (threadIdx.x == 0 && down < ctx.world_size) ctx.signal_set(flags + 0, t, down);
  }
  for (int i = 2 + blockIdx.x; i < rows; i += gridDim.x) relax_row(u, unew, i, cols);
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    if (up >= 0) ctx.wait_until(flags + 0, iris::Cmp::ge, t);
    if (down < ctx.world_size) ctx.wait_until(flags + 1, iris::Cmp::ge, t);
  }
}
]]

local BLOCK = 128
local flags = ctx:zeros(2, "uint64")
local lab = {}

-- u, unew: (rows + 2) x cols float32; row 1 and row rows + 2 (1-based) are the halos.
local function shape(u)
  local s = u:shape()
  return s[1] - 2, s[2]
end

-- One step: unew from u, then the neighbours' halos of unew by host-driven copies of the edge rows.
function lab.step_host(u, unew)
  local rows, cols = shape(u)
  mod.sweep:launch({ grid = math.min(rows, 1024), block = BLOCK }, u, unew, rows, cols)
  if ctx.rank > 0 then unew:narrow(1, rows + 2, 1):peer(ctx.rank - 1):copy(unew:narrow(1, 2, 1)) end
  if ctx.rank < ctx.world_size - 1 then unew:narrow(1, 1, 1):peer(ctx.rank + 1):copy(unew:narrow(1, rows + 1, 1)) end
  ctx:barrier() -- every rank's copies are in place before anyone's next step reads its halos
end

-- One step with the halos put by the device; t grows by one with every call, across runs.
function lab.step_device(u, unew, t)
  local rows, cols = shape(u)
  mod.step_device:launch({ grid = math.max(1, math.min(rows - 1, 1024)), block = BLOCK }, u, unew, rows, cols, flags, t,
    ctx)
end

return lab
