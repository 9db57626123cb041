-- Warp-level code (issue 13): shuffle reductions, ballots, an xor butterfly and shuffles with a width
-- of 16 give on the cpu backend what they give on an NVIDIA GPU, checked against the host. The
-- kernels cross-compile for NVRTC and hiprtc with the rest of the suite (CUDA's spellings on HIP,
-- HIP's on CUDA). Warps are 32 lanes here; the last block is a partial warp on purpose.
local ctx = iris.init {}

local mod = iris.compile [[
__device__ unsigned int lane_of(unsigned int i) { return i % 32u; }

// Lane 0 of each warp writes the warp's sum, reduced by shifting down.
__global__ void warp_sums(const float* in, float* sums, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if (lane_of(threadIdx.x) == 0 && i < n) sums[i / 32] = v;
}

// Every lane of the warp gets the total (xor butterfly), in 64-bit integers and in double.
__global__ void butterfly(const int64_t* in, int64_t* totals, double* dtotals) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int64_t v = in[i];
  double d = static_cast<double>(in[i]) * 0.5;
  for (int m = 1; m < 32; m *= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, m);
    d += __shfl_xor_sync(0xffffffffu, d, m);
  }
  totals[i] = v;
  dtotals[i] = d;
}

// Which lanes hold a value above the threshold, and whether any / all of them do.
__global__ void votes(const int* in, uint32_t* ballots, int* anys, int* alls, int threshold) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int above = in[i] > threshold;
  const uint32_t ballot = __ballot_sync(0xffffffffu, above);
  const int any = __any_sync(0xffffffffu, above), all = __all_sync(0xffffffffu, above);
  if (lane_of(threadIdx.x) == 0) {
    ballots[i / 32] = ballot;
    anys[i / 32] = any;
    alls[i / 32] = all;
  }
}

// Shifts within segments of 16 lanes: a lane whose source falls outside keeps its own value.
__global__ void shifts16(const int* in, int* up, int* down, unsigned int delta) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  up[i] = __shfl_up_sync(0xffffffffu, in[i], delta, 16);
  down[i] = __shfl_down_sync(0xffffffffu, in[i], delta, 16);
  __syncwarp();
}

// HIP's spellings, without masks.
__global__ void hip_sums(const int* in, int* sums) {
  int v = in[threadIdx.x];
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor(v, m);
  if (__lane_id() == 0) sums[threadIdx.x / 32] = v + (__ballot(1) != 0 ? 0 : 1000000);
}
]]

local BLOCK = 96
local N = 4 * BLOCK - 40 -- the last warp of the last block is partial: 24 of 32 lanes have data

local function host_table(t) return t:to_table() end

iris.test("a shuffle-down reduction sums each warp", function()
  local values = {}
  for i = 1, N do values[i] = (i * 7) % 13 - 6 end
  local input = ctx:tensor(values, "float32")
  local sums = ctx:zeros(4 * BLOCK / 32)
  mod.warp_sums:launch({ grid = 4, block = BLOCK }, input, sums, N)
  local got = host_table(sums)
  for w = 0, math.ceil(N / 32) - 1 do
    local expected = 0
    for i = w * 32 + 1, math.min(N, w * 32 + 32) do expected = expected + values[i] end
    iris.assert_equal(got[w + 1], expected, ("warp %d"):format(w))
  end
end)

iris.test("an xor butterfly gives every lane the warp's total, in int64 and double", function()
  local values = {}
  for i = 1, 2 * BLOCK do values[i] = i * 1000003 end
  local input = ctx:tensor(values, "int64")
  local totals, dtotals = ctx:zeros(2 * BLOCK, "int64"), ctx:zeros(2 * BLOCK, "float64")
  mod.butterfly:launch({ grid = 2, block = BLOCK }, input, totals, dtotals)
  local got, dgot = host_table(totals), host_table(dtotals)
  for i = 1, 2 * BLOCK do
    local w = math.floor((i - 1) / 32)
    local expected = 0
    for j = w * 32 + 1, w * 32 + 32 do expected = expected + values[j] end
    iris.assert_equal(got[i], expected, ("lane %d"):format(i - 1))
    iris.assert_equal(dgot[i], expected * 0.5, ("lane %d (double)"):format(i - 1))
  end
end)

iris.test("ballot, any and all vote over each warp's lanes", function()
  local values = {}
  for i = 1, BLOCK do values[i] = (i * 37) % 101 end
  values[33] = 1000 -- warp 1: exactly one lane above a high threshold
  local input = ctx:tensor(values, "int32")
  for _, threshold in ipairs { 50, 500, -1 } do
    local ballots, anys, alls = ctx:zeros(3, "uint32"), ctx:zeros(3, "int32"), ctx:zeros(3, "int32")
    mod.votes:launch({ grid = 1, block = BLOCK }, input, ballots, anys, alls, threshold)
    local b, a, l = host_table(ballots), host_table(anys), host_table(alls)
    for w = 0, 2 do
      local mask, count = 0, 0
      for lane = 0, 31 do
        if values[w * 32 + lane + 1] > threshold then
          mask = mask + 2 ^ lane
          count = count + 1
        end
      end
      local what = ("warp %d, threshold %d"):format(w, threshold)
      iris.assert_equal(b[w + 1], mask, what .. ": ballot")
      iris.assert_equal(a[w + 1], count > 0 and 1 or 0, what .. ": any")
      iris.assert_equal(l[w + 1], count == 32 and 1 or 0, what .. ": all")
    end
  end
end)

iris.test("up and down shifts with a width of 16 stay inside their segment", function()
  local values = {}
  for i = 1, BLOCK do values[i] = 100 + i end
  local input = ctx:tensor(values, "int32")
  for _, delta in ipairs { 1, 3, 8, 15 } do
    local up, down = ctx:zeros(BLOCK, "int32"), ctx:zeros(BLOCK, "int32")
    mod.shifts16:launch({ grid = 1, block = BLOCK }, input, up, down, delta)
    local u, d = host_table(up), host_table(down)
    for i = 0, BLOCK - 1 do
      local in_segment = i % 16
      local from_up = in_segment >= delta and i - delta or i
      local from_down = in_segment + delta < 16 and i + delta or i
      iris.assert_equal(u[i + 1], values[from_up + 1], ("delta %d, lane %d: up"):format(delta, i % 32))
      iris.assert_equal(d[i + 1], values[from_down + 1], ("delta %d, lane %d: down"):format(delta, i % 32))
    end
  end
end)

iris.test("HIP's spellings reduce 32-lane warps on the cpu backend (and on NVIDIA GPUs)", function()
  if ctx.backend == "hip" then iris.skip("warps are 64 lanes on AMD GPUs; the cpu backend's are 32") end
  local values = {}
  for i = 1, 64 do values[i] = i * i end
  local sums = ctx:zeros(2, "int32")
  mod.hip_sums:launch({ grid = 1, block = 64 }, ctx:tensor(values, "int32"), sums)
  local got = host_table(sums)
  for w = 0, 1 do
    local expected = 0
    for i = w * 32 + 1, w * 32 + 32 do expected = expected + values[i] end
    iris.assert_equal(got[w + 1], expected, ("warp %d"):format(w))
  end
end)
