-- iris::Context on the device: its fields and Iris spellings, heap bases as ctx:heap_bases() has them,
-- translation, and its methods against the free functions they stand for (issue 4).
local ctx = iris.init {}
local rank, world = ctx.rank, ctx.world_size

local mod = iris.compile [[
__global__ void describe(int64_t* out, iris::Context ctx) {
  out[0] = ctx.rank;
  out[1] = ctx.world_size;
  out[2] = ctx.get_rank();
  out[3] = ctx.get_num_ranks();
}
__global__ void bases(uint64_t* out, iris::Context ctx) {
  for (int r = 0; r < ctx.world_size; ++r) out[r] = ctx.heap_bases[r];
}
// Where `p` lands on every rank: the same offset from that rank's heap base.
__global__ void translation(const float* p, int64_t* offsets, iris::Context ctx) {
  for (int r = 0; r < ctx.world_size; ++r) {
    const float* q = ctx.translate(p, r);
    offsets[r] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(q) - ctx.heap_bases[r]);
  }
}
// Each method and its free function must agree: rank r adds its rank + 1 to the counter of every rank
// through both, and writes its rank into slot r of every rank through store and put.
__global__ void methods(int32_t* counter, int32_t* slots, const int32_t* mine, iris::Context ctx) {
  for (int peer = 0; peer < ctx.world_size; ++peer) {
    ctx.atomic_add(counter, ctx.rank + 1, peer);
    iris::atomic_add(counter, ctx.rank + 1, ctx.rank, peer, ctx.heap_bases);
    ctx.store(slots + ctx.rank, ctx.rank, peer);
    ctx.put(mine, slots + ctx.world_size + ctx.rank, peer);
  }
}
]]

local out = ctx:zeros(4, "int64")
mod.describe:launch({ grid = 1, block = 1 }, out, ctx)
local v = out:to_table()
for i, expected in ipairs { rank, world, rank, world } do
  assert(tonumber(v[i]) == expected, ("describe[%d]: expected %d, got %s"):format(i, expected, tostring(v[i])))
end

local seen = ctx:zeros(world, "uint64")
mod.bases:launch({ grid = 1, block = 1 }, seen, ctx)
local from_host, from_device = ctx:heap_bases():to_table(), seen:to_table()
for r = 1, world do
  assert(from_host[r] == from_device[r], ("heap base of rank %d: host %s, device %s"):format(r - 1,
    tostring(from_host[r]), tostring(from_device[r])))
end

local x = ctx:zeros(10)
local offsets = ctx:zeros(world, "int64")
mod.translation:launch({ grid = 1, block = 1 }, x, offsets, ctx)
for r, offset in ipairs(offsets:to_table()) do
  assert(tonumber(offset) == x:offset(), ("translate to rank %d: offset %s, tensor offset %d"):format(r - 1,
    tostring(offset), x:offset()))
end

local counter = ctx:zeros(1, "int32")
local slots = ctx:zeros(2 * world, "int32")
local mine = ctx:full(1, rank, "int32")
ctx:barrier()
mod.methods:launch({ grid = 1, block = 1 }, counter, slots, mine, ctx)
ctx:barrier()
local total = 0
for r = 0, world - 1 do total = total + 2 * (r + 1) end
assert(counter:to_table()[1] == total, ("counter: expected %d, got %s"):format(total, tostring(counter:to_table()[1])))
local s = slots:to_table()
for r = 0, world - 1 do
  assert(s[r + 1] == r and s[world + r + 1] == r, ("slot %d: store wrote %s, put wrote %s"):format(r,
    tostring(s[r + 1]), tostring(s[world + r + 1])))
end
print(("rank %d: iris::Context fields, heap bases, translation and methods correct"):format(rank))

-- iris's own kernel files compile through the same path as snippets; an unknown name says so.
local builtin = require("iris.kernel").builtin
local barrier_module = builtin("device_barrier")
assert(builtin("device_barrier") == barrier_module, "a built-in kernel file is compiled once per process")
assert(barrier_module.iris_device_barrier.label:find("kernels/device_barrier.hip", 1, true))
local ok, message = pcall(builtin, "no_such_file")
assert(not ok and message:find("'no_such_file' is not one of iris's built-in kernel files", 1, true), message)
print(("rank %d: built-in kernel files load by name"):format(rank))
