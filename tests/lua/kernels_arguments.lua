-- Launch arguments against the real tensors and context: what passes, and the error for each mismatch
-- (the same checks the unit tests make with test doubles, issue 4).
local ctx = iris.init {}

local mod = iris.compile [[
__global__ void k(float* buf, int n, iris::Context ctx, bool flag, iris::half h, void* any) {
  if (threadIdx.x == 0 && flag) buf[0] = static_cast<float>(n) + float(h);
}
]]
local buf = ctx:zeros(4)
mod.k:launch({ grid = 1, block = 1 }, buf, 2, ctx, true, 0.5, ctx:zeros(1, "int8"))
assert(buf:to_table()[1] == 2.5, "kernel result " .. tostring(buf:to_table()[1]))

local function expect_error(pattern, fn)
  local ok, err = pcall(fn)
  assert(not ok, "no error for: " .. pattern)
  assert(err:find(pattern, 1, true), "error\n  " .. tostring(err) .. "\ndoes not contain\n  " .. pattern)
end
local cfg = { grid = 1, block = 1 }
expect_error("argument 1 'buf' (float*) expects a float32 tensor, got a float16 tensor",
  function() mod.k:launch(cfg, ctx:zeros(1, "float16"), 1, ctx, true, 0, buf) end)
expect_error("argument 2 'n' (int) expects an integer in [-2147483648, 2147483647], got number 0.5",
  function() mod.k:launch(cfg, buf, 0.5, ctx, true, 0, buf) end)
expect_error("argument 3 'ctx' (iris::Context) expects the iris context (ctx), got a ",
  function() mod.k:launch(cfg, buf, 1, buf, true, 0, buf) end)
expect_error("expects 6 arguments (float* buf, int n, iris::Context ctx, bool flag, iris::half h, void* any), got 2",
  function() mod.k:launch(cfg, buf, 1) end)
expect_error("cfg.block must be an integer or {x, y, z}, got nil",
  function() mod.k:launch({ grid = 1 }, buf, 1, ctx, true, 0, buf) end)
expect_error("k:launch: a block of 32 x 32 x 2 = 2048 threads; at most 1024",
  function() mod.k:launch({ grid = 1, block = { 32, 32, 2 } }, buf, 1, ctx, true, 0, buf) end)

-- 64-bit integers: 2^64 and 2^63 are the doubles just past uint64_t's and int64_t's ranges (issue 12).
local wide = iris.compile [[
__global__ void wide(uint64_t* out, uint64_t u, int64_t s) { out[0] = u; out[1] = static_cast<uint64_t>(s); }
]].wide
local out = ctx:zeros(2, "uint64")
expect_error("argument 2 'u' (uint64_t) expects an integer in [0, 18446744073709551615], got number",
  function() wide:launch(cfg, out, 2 ^ 64, 0) end)
expect_error("argument 3 's' (int64_t) expects an integer in [-9223372036854775808, 9223372036854775807], got number",
  function() wide:launch(cfg, out, 0, 2 ^ 63) end)
wide:launch(cfg, out, 0xffffffffffffffffULL, -1)
assert(out:to_table()[1] == 2 ^ 64 - 1 and out:get(2) == 2 ^ 64 - 1, "exact uint64_t cdata and int64_t -1")

-- A compile error: the compiler's log, its lines counted in the snippet, and the script line where
-- the snippet's first line is (found in this file, though LuaJIT reports the call's last line).
local first_line = debug.getinfo(1, "l").currentline + 2
local ok, err = pcall(iris.compile, [[
__global__ void broken(int* p) {
  p[0] = undeclared_name;
}]])
assert(not ok, "a broken snippet compiled")
assert(err:find("kernels_arguments.lua:" .. first_line .. " for ", 1, true), err)
assert(err:find("snippet[:(]2"), err) -- host compiler and hiprtc: snippet:2:5, NVRTC: snippet(2)
assert(err:find("undeclared_name", 1, true), err)
print(("rank %d: argument checks against real tensors correct"):format(ctx.rank))
