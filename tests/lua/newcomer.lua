-- What a newcomer trips on (issue 27), through the real binary at 1, 2 and 4 ranks: the Lua-side and
-- device-side small ones (item 10).
local ctx = iris.init {}

iris.test("t.shape is a field as in Torch, and t:shape() still works", function()
  local t = ctx:zeros({ 2, 3 })
  assert(#t.shape == 2 and t.shape[1] == 2 and t.shape[2] == 3, "t.shape holds the sizes")
  assert(tostring(t.shape) == "{2, 3}", tostring(t.shape))
  local called = t:shape()
  assert(getmetatable(called) == nil and #called == 2 and called[2] == 3, "t:shape() is a plain table")
  assert(#ctx:zeros({}).shape == 0, "a 0-d tensor's shape is empty")
  local ok, err = pcall(function() t.shape = { 3, 2 } end)
  assert(not ok and err:find("a tensor has no field 'shape' to set", 1, true), tostring(err))
end)

-- One snippet for the device-side cases: a helper comes first, so the kernel is not on its first line.
local kernel_line = debug.getinfo(1, "l").currentline + 5
local mod = iris.compile [[
// A helper before the kernel.
__device__ unsigned long long twice(unsigned long long x) { return 2 * x; }

__global__ void literals(uint64_t* flags, iris::Context ctx) {
  if (threadIdx.x != 0) return;
  ctx.atomic_add(flags, 1, (ctx.rank + 1) % ctx.world_size);  // an int literal into a uint64_t*
  ctx.atomic_max(flags + 1, twice(2), ctx.rank);
  ctx.store(flags + 2, 7, ctx.rank);
  ctx.signal_add(flags + 3, 1, ctx.rank);
  ctx.wait_until(flags + 3, iris::Cmp::ge, 1);
  uint32_t* narrow = reinterpret_cast<uint32_t*>(flags + 4);
  ctx.atomic_cas(narrow, 0, 5, ctx.rank);
}
]]

iris.test("atomics, stores and waits take a literal of another type than the pointer's", function()
  local flags = ctx:zeros(5, "uint64")
  mod.literals:launch({ grid = 1, block = 32 }, flags, ctx)
  ctx:barrier()
  iris.assert_equal(flags, { 1, 4, 7, 1, 5 })
end)

iris.test("a kernel's label names its own line, not the snippet's first", function()
  local label = tostring(mod.literals)
  local line = tonumber(label:match("newcomer%.lua:(%d+)%)"))
  assert(line == kernel_line, ("%s: expected line %d"):format(label, kernel_line))
end)
