-- Every atomic on every rank's heap, over every semantic x scope and every type it takes (issue 4).
local ctx = iris.init {}
local rank, world = ctx.rank, ctx.world_size
-- Every thread of every rank hits every rank's words, the rank's own GPU too. Across nodes on GPUs, the
-- atomics of other nodes are atomic with each other but not with the GPU's own on the same word
-- (docs/multinode.md: the target's proxy or the transport applies them); nodes.lua checks them there.
if ctx.nodes > 1 and require("ffi").C.iris_host_addressable() == 0 then
  iris.skip("across nodes on GPUs, other nodes' atomics are not atomic with the target GPU's own on one word")
end

local THREADS, ITERS = 32, 2
local TOTAL = world * THREADS * ITERS -- contributions each slot receives
local COMBOS = 12                      -- 4 semantics x 3 scopes: one slot each

local helpers = [[
// Slot c uses semantic c / 3 and scope c % 3; every thread of every rank hits every rank's slot.
#define FOR_EACH_COMBO_AND_PEER(body)                                                        \
  for (int c = 0; c < 12; ++c) {                                                             \
    const iris::Semantic sem = static_cast<iris::Semantic>(c / 3);                           \
    const iris::Scope scope = static_cast<iris::Scope>(c % 3);                               \
    for (int peer = 0; peer < ctx.world_size; ++peer)                                        \
      for (int k = 0; k < iters; ++k) { auto* p = slots + c; body; }                          \
  }
]]
local arithmetic = [[
__global__ void arith_SUFFIX(T* slots, iris::Context ctx, int op, int iters) {
  const T mine = static_cast<T>(ctx.rank + 10);
  FOR_EACH_COMBO_AND_PEER(
    switch (op) {
      case 0: ctx.atomic_add(p, static_cast<T>(1), peer, sem, scope); break;
      case 1: ctx.atomic_sub(p, static_cast<T>(1), peer, sem, scope); break;
      case 2: ctx.atomic_xchg(p, static_cast<T>(ctx.rank + 1), peer, sem, scope); break;
      case 3: ctx.atomic_min(p, mine, peer, sem, scope); break;
      case 4: ctx.atomic_max(p, mine, peer, sem, scope); break;
      default: {  // an increment by compare-and-swap
        T expected = static_cast<T>(0);
        for (;;) {
          const T old = ctx.atomic_cas(p, expected, static_cast<T>(expected + static_cast<T>(1)), peer, sem, scope);
          if (old == expected) break;
          expected = old;
        }
      }
    })
}
]]
local bitwise = [[
__global__ void bits_SUFFIX(T* slots, iris::Context ctx, int op, int iters) {
  const T bit = static_cast<T>(1) << ctx.rank;
  if (op == 2 && threadIdx.x != 0) return;  // xor: once per rank, so the bits stay set
  FOR_EACH_COMBO_AND_PEER(
    switch (op) {
      case 0: ctx.atomic_or(p, bit, peer, sem, scope); break;
      case 1: ctx.atomic_and(p, static_cast<T>(~bit), peer, sem, scope); break;
      default: if (k == 0) ctx.atomic_xor(p, bit, peer, sem, scope); break;
    })
}
]]
local float16 = [[
__global__ void half_SUFFIX(T* slots, iris::Context ctx, int op, int iters) {
  FOR_EACH_COMBO_AND_PEER(
    if (op == 0) ctx.atomic_add(p, T(1.0f), peer, sem, scope);
    else ctx.atomic_sub(p, T(1.0f), peer, sem, scope))
}
]]

local ARITHMETIC = { int32 = "int32_t", uint32 = "uint32_t", int64 = "int64_t", uint64 = "uint64_t",
  float32 = "float", float64 = "double" }
local BITWISE = { int32 = "int32_t", uint32 = "uint32_t", int64 = "int64_t", uint64 = "uint64_t" }
local FLOAT16 = { float16 = "iris::half", bfloat16 = "iris::bfloat16" }

local source = { helpers }
-- In the dtypes' order, not pairs()'s: that differs between processes, and so would the source, which
-- then compiled again (three compilers, seconds each) in every test process instead of coming from the cache.
local function instantiate(text, types)
  local names = {}
  for dtype in pairs(types) do names[#names + 1] = dtype end
  table.sort(names)
  for _, dtype in ipairs(names) do
    source[#source + 1] = text:gsub("SUFFIX", dtype):gsub("%f[%w]T%f[%W]", types[dtype])
  end
  return names
end
local arithmetic_types = instantiate(arithmetic, ARITHMETIC)
local bitwise_types = instantiate(bitwise, BITWISE)
local float16_types = instantiate(float16, FLOAT16)
local mod = iris.compile(table.concat(source))

-- Runs `kernel` with op `op` on slots filled with `initial`; every slot of every rank must end as `check` says.
local function round(kernel, dtype, op, initial, check, what)
  local slots = ctx:zeros(COMBOS, dtype)
  slots:fill(initial)
  ctx:barrier()
  kernel:launch({ grid = 1, block = THREADS }, slots, ctx, op, ITERS)
  ctx:barrier()
  for c, v in ipairs(slots:to_table()) do
    v = tonumber(v)
    if not check(v) then
      error(("%s %s: rank %d, semantic %d, scope %d: unexpected %s"):format(what, dtype, rank,
        math.floor((c - 1) / 3), (c - 1) % 3, tostring(v)), 2)
    end
  end
  ctx:barrier()
  slots:free()
end

for _, dtype in ipairs(arithmetic_types) do
  local k = mod["arith_" .. dtype]
  round(k, dtype, 0, 0, function(v) return v == TOTAL end, "atomic_add")
  round(k, dtype, 1, TOTAL, function(v) return v == 0 end, "atomic_sub")
  round(k, dtype, 2, 0, function(v) return v >= 1 and v <= world end, "atomic_xchg")
  round(k, dtype, 3, 1000, function(v) return v == 10 end, "atomic_min")
  round(k, dtype, 4, 0, function(v) return v == 10 + world - 1 end, "atomic_max")
  round(k, dtype, 5, 0, function(v) return v == TOTAL end, "atomic_cas")
end
local all_bits = 2 ^ world - 1
for _, dtype in ipairs(bitwise_types) do
  local k = mod["bits_" .. dtype]
  round(k, dtype, 0, 0, function(v) return v == all_bits end, "atomic_or")
  round(k, dtype, 1, 255, function(v) return v == 255 - all_bits end, "atomic_and")
  round(k, dtype, 2, 0, function(v) return v == all_bits end, "atomic_xor")
end
for _, dtype in ipairs(float16_types) do
  local k = mod["half_" .. dtype]
  round(k, dtype, 0, 0, function(v) return v == TOTAL end, "atomic_add")
  round(k, dtype, 1, TOTAL, function(v) return v == 0 end, "atomic_sub")
end
print(("rank %d: every atomic, semantic and scope correct for %d ranks"):format(rank, world))
