-- Lab 03: atomics and memory ordering.
-- Fill in the places marked TODO; 03-atomics.md explains each. Check your file with
--   mpirun -np 2 iris-lua lab check 03 03-atomics.lua     (and -np 4; it needs 2 ranks at least)
-- On the cpu backend the checker runs your kernels under the weak memory model
-- (IRIS_CPU_MEMORY_MODEL=weak), where a flag raised without release overtakes the data, as on a GPU.
local ctx = iris.init {}

local mod = iris.compile [[
// A histogram spread over the ranks: bin b (0 <= b < bins * world_size) is counts[b % bins] on rank
// b / bins. Every rank adds its n values into the bins, wherever they live.
__global__ void histogram(const int* values, int* counts, long n, int bins, iris::Context ctx) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const int b = values[i];
    // TODO(lab 03): add 1 to bin b, on the rank that holds it (many threads add to the same bin at once)
  }
}

// A message from one thread: rank `to`'s inbox := data (n ints), then rank `to`'s flag := round, so
// that a consumer that sees the flag sees the data.
__global__ void publish(const int* data, int* inbox, int* flag, int n, int round, int to, iris::Context ctx) {
  for (int i = 0; i < n; ++i) ctx.store(inbox + i, data[i], to);
  // TODO(lab 03): raise rank `to`'s flag to `round`, ordered after the data
}

// Waits until this rank's flag holds `round`, then copies the inbox into out.
__global__ void consume(const int* inbox, const int* flag, int* out, int n, int round, iris::Context ctx) {
  // TODO(lab 03): wait until *flag == round, with a bounded wait that acquires
  for (int i = 0; i < n; ++i) out[i] = inbox[i];
}
]]

local lab = {}

-- values: n int32 in [0, bins * world_size); counts: bins int32 on every rank (the checker zeroes them).
function lab.histogram(values, counts)
  local n, bins = values:numel(), counts:numel()
  mod.histogram:launch({ grid = math.max(1, math.min(iris.cdiv(n, 256), 256)), block = 256 }, values, counts, n, bins, ctx)
end

-- data: n int32 here; inbox (n int32) and flag (1 int32) are rank `to`'s; round: a number that grows.
function lab.publish(data, inbox, flag, round, to)
  mod.publish:launch({ grid = 1, block = 1 }, data, inbox, flag, data:numel(), round, to, ctx)
end

-- Called on the rank `to` of a publish, at the same time.
function lab.consume(inbox, flag, out, round)
  mod.consume:launch({ grid = 1, block = 1 }, inbox, flag, out, out:numel(), round, ctx)
end

return lab
