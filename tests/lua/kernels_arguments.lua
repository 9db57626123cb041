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
-- A mistyped key is named, not taken for a missing one (issue 13).
expect_error("k:launch: unknown cfg key 'blocks' (did you mean 'block'? cfg keys: grid, block, shared)",
  function() mod.k:launch({ grid = 1, blocks = 1 }, buf, 1, ctx, true, 0, buf) end)
expect_error("k:launch: unknown cfg key 'sharde' (did you mean 'shared'? cfg keys: grid, block, shared)",
  function() mod.k:launch({ grid = 1, block = 1, sharde = 64 }, buf, 1, ctx, true, 0, buf) end)
expect_error("iris.bench: unknown option 'iterations' (options: warmup, iters, lead)",
  function() iris.bench(function() end, { iterations = 3 }) end)
expect_error("ctx:manual_seed: unknown option 'share' (did you mean 'shared'? options: shared)",
  function() ctx:manual_seed(1, { share = true }) end)
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

-- A compile error: the compiler's log, with the script line where the snippet's first line is (found
-- in this file, though LuaJIT reports the call's last line), and the compiler's messages at this
-- file's lines: the mistake on the snippet's 10th line is reported at the script line it is on.
local first_line = debug.getinfo(1, "l").currentline + 2
local ok, err = pcall(iris.compile, [[
__global__ void broken(int* p) {
  int a = 1;
  int b = 2;
  int c = 3;
  int d = 4;
  int e = 5;
  int f = 6;
  int g = 7;
  int h = 8;
  p[0] = undeclared_name + a + b + c + d + e + f + g + h;
}]])
assert(not ok, "a broken snippet compiled")
assert(err:find("kernels_arguments.lua:" .. first_line .. " for ", 1, true), err)
-- host compiler and hiprtc: kernels_arguments.lua:N:5, NVRTC: kernels_arguments.lua(N)
assert(err:find("kernels_arguments.lua[:(]" .. first_line + 9 .. "[:)]"), err)
assert(not err:find("snippet[:(]"), err)
assert(err:find("undeclared_name", 1, true), err)
print(("rank %d: argument checks against real tensors correct"):format(ctx.rank))

-- A parameter type spelled with an object-like macro, or with a define of the compile options,
-- resolves as the macro's text would (issue 13).
local macros = iris.compile([[
#define PTR int*
__global__ void seven(PTR out, REAL scale) { out[0] = static_cast<int>(7 * scale); }
]], { defines = { REAL = "float" } })
local out = ctx:zeros(1, "int32")
macros.seven:launch({ grid = 1, block = 1 }, out, 1)
ctx:synchronize()
assert(out:to_table()[1] == 7, "kernel through #define PTR wrote " .. tostring(out:to_table()[1]))

-- A TMA descriptor (iris::gemm::TensorMap, 128 bytes) passes by value as `const __grid_constant__`: the
-- kernel reads the bytes Lua put in the slot. Only the cuda backend on an H100 or H200 encodes one
-- (ctx:tensor_map); elsewhere the call says so, and a map made by hand still travels (issue 25).
local ffi = require "ffi"
local peek = iris.compile [[
__global__ void peek(const __grid_constant__ iris::gemm::TensorMap map, uint64_t* out, int n) {
  if (threadIdx.x == 0) { out[0] = map.opaque[0] + n; out[1] = map.opaque[15]; }
}]].peek
local map = ffi.new("iris_tensor_map")
map.opaque[0], map.opaque[15] = 41, 7
local seen = ctx:zeros(2, "uint64")
peek:launch(cfg, map, seen, 1)
assert(seen:get(1) == 42 and seen:get(2) == 7, "the tensor map's first and last words: " .. seen:get(1) .. ", " .. seen:get(2))
expect_error("argument 1 'map' (const __grid_constant__ iris::gemm::TensorMap) expects a tensor map "
  .. "(ctx:tensor_map(t, box)), got number 3", function() peek:launch(cfg, 3, seen, 1) end)
local matrix = ctx:zeros({ 128, 64 }, "bfloat16")
if ctx.backend == "cuda" then
  local ok, made = pcall(ctx.tensor_map, ctx, matrix, { 128, 64 })
  assert(ok or tostring(made):find("compute capability 9.0", 1, true), tostring(made))
else
  expect_error("the " .. ctx.backend .. " backend has no TMA", function() ctx:tensor_map(matrix, { 128, 64 }) end)
end
expect_error("ctx:tensor_map(t, {box_rows, box_cols}): t must be a matrix (2-d) whose rows are contiguous",
  function() ctx:tensor_map(matrix:transpose(1, 2), { 64, 64 }) end)
