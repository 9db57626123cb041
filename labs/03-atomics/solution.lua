-- Lab 03, a reference solution (for teachers; docs/labs/README.md). Check it with
--   mpirun -np 2 iris-lua lab check 03 labs/03-atomics/solution.lua
local ctx = iris.init {}

local mod = iris.compile [[
// A histogram spread over the ranks: bin b (0 <= b < bins * world_size) is counts[b % bins] on rank
// b / bins. Every rank adds its n values into the bins, wherever they live.
__global__ void histogram(const int* values, int* counts, long n, int bins, iris::Context ctx) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const int b = values[i];
    ctx.atomic_add(counts + b % bins, 1, b / bins, iris::relaxed);  // a count: no ordering needed
  }
}

// A message from one thread: rank `to`'s inbox := data (n ints), then rank `to`'s flag := round, so
// that a consumer that sees the flag sees the data.
__global__ void publish(const int* data, int* inbox, int* flag, int n, int round, int to, iris::Context ctx) {
  for (int i = 0; i < n; ++i) ctx.store(inbox + i, data[i], to);
  ctx.signal_set(flag, round, to);  // an atomic store with release: the data above is visible first
}

// Waits until this rank's flag holds `round`, then copies the inbox into out.
__global__ void consume(const int* inbox, const int* flag, int* out, int n, int round, iris::Context ctx) {
  ctx.wait_until(flag, iris::Cmp::eq, round);  // acquire: the reads below see what came before the release
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
