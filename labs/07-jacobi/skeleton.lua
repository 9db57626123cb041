-- Lab 07: a Jacobi halo exchange, with device-initiated puts and with host-driven copies.
-- Fill in the places marked TODO; 07-jacobi.md explains each. Check your file with
--   mpirun -np 2 iris-lua lab check 07 07-jacobi.lua     (and -np 4; one rank works too)
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
    // TODO(lab 07): put row 1 of unew into row rows + 1 of the rank above, row `rows` into row 0 of the rank below
    __syncthreads();
    // TODO(lab 07): raise the flags: the rank above's flags[1] and the rank below's flags[0], to t
  }
  for (int i = 2 + blockIdx.x; i < rows; i += gridDim.x) relax_row(u, unew, i, cols);
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    // TODO(lab 07): wait until this rank's halos of unew have arrived for step t (flags[0], flags[1])
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
  -- TODO(lab 07): copy unew's row 2 (1-based: the first of this rank's rows) into the rank above's last row
  -- (rows + 2), and unew's row rows + 1 into the rank below's row 1: t:narrow(1, row, 1):peer(rank):copy(...)
  -- TODO(lab 07): make sure every rank's copies are done before any rank's next step
end

-- One step with the halos put by the device; t grows by one with every call, across runs.
function lab.step_device(u, unew, t)
  local rows, cols = shape(u)
  mod.step_device:launch({ grid = math.max(1, math.min(rows - 1, 1024)), block = BLOCK }, u, unew, rows, cols, flags, t,
    ctx)
end

return lab
