// iris.compile and launches from Lua, against the cpu backend and a registry of the test's own
// (no iris.init): argument checking and marshalling, launch configurations, compile errors and their
// lines, templates, options, timing. Tensors and ctx are test doubles with the memory engineer's
// contract (iris.tensor's is_tensor, t.dtype, t:data_ptr(); ctx.rank, ctx.world_size, ctx:heap_bases()),
// allocated in the fake heaps of kernel_test_support.hpp, so ctx.store(p, v, 1) lands in "rank 1".
#include <catch2/catch.hpp>
#include <lua.hpp>

#include <cstdio>
#include <fstream>

#include "compiler/files.hpp"
#include "iris/host.hpp"
#include "kernel_test_support.hpp"
#include "session/session.hpp"

using iris::test::CpuDevice;

namespace {

const char* kDoubles = R"(
local ffi = require "ffi"
local CTYPES = { bool = "bool", int8 = "int8_t", uint8 = "uint8_t", int16 = "int16_t", int32 = "int32_t",
  uint32 = "uint32_t", int64 = "int64_t", uint64 = "uint64_t", float16 = "uint16_t", bfloat16 = "uint16_t",
  float32 = "float", float64 = "double" }
local Tensor = {}
Tensor.__index = Tensor
function Tensor:data_ptr() return ffi.cast("void*", self.storage) end
package.loaded["iris.tensor_core"] = { is_tensor = function(v) return getmetatable(v) == Tensor end }
local next_offset = 64 * 1024
-- A zeroed tensor at the same offset of both fake heaps; t.storage is rank 0's, peer(t) rank 1's.
function tensor(dtype, n)
  local ctype = CTYPES[dtype]
  local t = setmetatable({ dtype = dtype, n = n, offset = next_offset }, Tensor)
  t.storage = ffi.cast(ctype .. "*", HEAP0 + next_offset)
  next_offset = next_offset + math.ceil(n * ffi.sizeof(ctype) / 256) * 256
  return t
end
function peer(t) return ffi.cast(CTYPES[t.dtype] .. "*", HEAP1 + t.offset) end
ctx = { rank = 0, world_size = 2, heap_bases = function() return { data_ptr = function() return HEAP_BASES end } end }
function expect_error(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error matching: " .. pattern)
  if not err:find(pattern, 1, true) then error("error\n  " .. err .. "\ndoes not contain\n  " .. pattern, 2) end
  return err
end
)";

struct LuaKernelFixture {
  iris::Host host;
  CpuDevice device;

  LuaKernelFixture() {
    iris::session::use_registry(device.registry.get());
    const auto address = [](const void* p) { return std::to_string(reinterpret_cast<uintptr_t>(p)) + "ULL"; };
    const std::string setup = "local ffi = require 'ffi'\n"
                              "HEAP0 = ffi.cast('char*', " + address(device.heaps[0]) + ")\n"
                              "HEAP1 = ffi.cast('char*', " + address(device.heaps[1]) + ")\n"
                              "HEAP_BASES = ffi.cast('void*', " + address(device.heap_bases) + ")\n";
    REQUIRE(host.run_string(setup, "=setup").ok());
    REQUIRE(host.run_string(kDoubles, "=doubles").ok());
  }
  ~LuaKernelFixture() {
    iris::session::use_registry(nullptr);
    host.finish();
  }

  // Runs `code` as the chunk "test.lua"; fails the test with Lua's message and traceback on an error.
  void run(const std::string& code) {
    const iris::RunResult r = host.run_string(code, "=test.lua");
    INFO(r.message << "\n" << r.traceback);
    REQUIRE(r.ok());
  }
};

}  // namespace

TEST_CASE_METHOD(LuaKernelFixture, "Lua launches pass tensors, numbers, booleans and ctx as declared",
                 "[unit][lua][kernel]") {
  run(R"LUA(
local mod = iris.compile([[
  __global__ void put_ones(float* buf, int n, iris::Context ctx, int dst) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ctx.store(buf + i, 1.0f, dst);
  }
  __global__ void scalars(double* out, int8_t a, uint64_t b, float c, double d, bool e, iris::half h,
                          iris::bfloat16 g, size_t s) {
    out[0] = a; out[1] = static_cast<double>(b); out[2] = c; out[3] = d; out[4] = e ? 1 : 0;
    out[5] = float(h); out[6] = float(g); out[7] = static_cast<double>(s);
  }
  __global__ void any(void* p, int bytes) { for (int i = 0; i < bytes; ++i) static_cast<unsigned char*>(p)[i] = 7; }
]])
local buf = tensor("float32", 1000)
mod.put_ones:launch({grid = iris.cdiv(1000, 256), block = 256}, buf, 1000, ctx, 1)
local remote = peer(buf)
for i = 0, 999 do assert(remote[i] == 1, "rank 1 element " .. i) end
assert(buf.storage[0] == 0, "rank 0 untouched")

local out = tensor("float64", 8)
mod:kernel("scalars"):launch({grid = 1, block = {1, 1, 1}}, out, -128, 2^53, 0.5, 1e300, true, -2.5, 3.0, 12345)
local expected = { -128, 2^53, 0.5, 1e300, 1, -2.5, 3.0, 12345 }
for i = 1, 8 do assert(out.storage[i - 1] == expected[i], "scalar " .. i .. ": " .. tostring(out.storage[i - 1])) end

local bytes = tensor("int8", 16)
mod.any:launch({grid = {1}, block = {x = 1}}, bytes, 16)
assert(bytes.storage[15] == 7)
assert(tostring(mod.any):find("any %(test.lua:2%)"))
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "argument errors name kernel, parameter, expected and got", "[unit][lua][kernel]") {
  run(R"LUA(
local mod = iris.compile([[
  __global__ void k(float* buf, int n, iris::Context ctx, bool flag, double x, uint8_t small) {}
]])
local k = mod.k
local cfg = {grid = 1, block = 1}
local f32, i32 = tensor("float32", 4), tensor("int32", 4)
expect_error("test.lua:9: k (test.lua:2) expects 6 arguments (float* buf, int n, iris::Context ctx, bool flag, double x, uint8_t small), got 3",
  function() k:launch(cfg, f32, 1, ctx) end)
expect_error("k (test.lua:2): argument 1 'buf' (float*) expects a float32 tensor, got an int32 tensor",
  function() k:launch(cfg, i32, 1, ctx, true, 1, 1) end)
expect_error("argument 1 'buf' (float*) expects a float32 tensor, got number 5", function() k:launch(cfg, 5, 1, ctx, true, 1, 1) end)
expect_error("argument 2 'n' (int) expects an integer in [-2147483648, 2147483647], got number 1.5",
  function() k:launch(cfg, f32, 1.5, ctx, true, 1, 1) end)
expect_error("argument 2 'n' (int) expects an integer in [-2147483648, 2147483647], got number 4294967296",
  function() k:launch(cfg, f32, 2^32, ctx, true, 1, 1) end)
expect_error("argument 2 'n' (int) expects an integer in [-2147483648, 2147483647], got '3'",
  function() k:launch(cfg, f32, "3", ctx, true, 1, 1) end)
expect_error("argument 3 'ctx' (iris::Context) expects the iris context (ctx), got a table",
  function() k:launch(cfg, f32, 1, {}, true, 1, 1) end)
expect_error("argument 4 'flag' (bool) expects a boolean, got number 1", function() k:launch(cfg, f32, 1, ctx, 1, 1, 1) end)
expect_error("argument 5 'x' (double) expects a number, got nil", function() k:launch(cfg, f32, 1, ctx, true, nil, 1) end)
expect_error("argument 6 'small' (uint8_t) expects an integer in [0, 255], got number -1",
  function() k:launch(cfg, f32, 1, ctx, true, 1, -1) end)
-- The message points at the user's line, not into iris.
local err = expect_error("argument 2", function() k:launch(cfg, f32, 0/0, ctx, true, 1, 1) end)
assert(err:find("^test.lua:%d+:"), err)
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "64-bit integer arguments are range-checked exactly; int64_t and uint64_t cdata pass exact values",
                 "[unit][lua][kernel]") {
  run(R"LUA(
local mod = iris.compile([[
  __global__ void wide(unsigned long long* out, uint64_t u, int64_t s, uint32_t w) {
    out[0] = u; out[1] = static_cast<unsigned long long>(s); out[2] = w;
  }
]])
local k, cfg, out = mod.wide, {grid = 1, block = 1}, tensor("uint64", 3)
-- 2^64 and 2^63 are doubles just above the ranges: a double cannot say 2^64 - 1 or 2^63 - 1.
expect_error("argument 2 'u' (uint64_t) expects an integer in [0, 18446744073709551615], got number 1.844674407371e+19",
  function() k:launch(cfg, out, 2^64, 0, 0) end)
expect_error("argument 3 's' (int64_t) expects an integer in [-9223372036854775808, 9223372036854775807], got number 9.2233720368548e+18",
  function() k:launch(cfg, out, 0, 2^63, 0) end)
expect_error("argument 4 'w' (uint32_t) expects an integer in [0, 4294967295], got number 4294967296",
  function() k:launch(cfg, out, 0, 0, 2^32) end)
expect_error("argument 3 's' (int64_t) expects an integer in [-9223372036854775808, 9223372036854775807], got cdata 9223372036854775808ULL",
  function() k:launch(cfg, out, 0, 2ULL^63, 0) end)
expect_error("argument 2 'u' (uint64_t) expects an integer in [0, 18446744073709551615], got cdata -1LL",
  function() k:launch(cfg, out, -1LL, 0, 0) end)
expect_error("argument 4 'w' (uint32_t) expects an integer in [0, 4294967295], got cdata 4294967296LL",
  function() k:launch(cfg, out, 0, 0, 4294967296LL) end)
-- The extremes themselves pass, exactly, as cdata; -2^63 is a double too.
k:launch(cfg, out, 0xffffffffffffffffULL, 0x7fffffffffffffffLL, 4294967295LL)
assert(out.storage[0] == 0xffffffffffffffffULL and out.storage[1] == 0x7fffffffffffffffULL and out.storage[2] == 4294967295ULL)
k:launch(cfg, out, 2^53, -2^63, 0)
assert(out.storage[0] == 2^53 and out.storage[1] == 0x8000000000000000ULL)
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "launch configuration errors say what is wrong with grid, block and shared",
                 "[unit][lua][kernel]") {
  run(R"LUA(
local k = iris.compile("__global__ void k() {}").k
expect_error("k:launch(cfg, ...): cfg must be a table {grid = ..., block = ... [, shared = bytes]}, got number 1",
  function() k:launch(1) end)
expect_error("k:launch: cfg.grid must be an integer or {x, y, z}, got nil", function() k:launch({block = 1}) end)
expect_error("k:launch: cfg.grid must be an integer from 1 to 2147483647 or {x, y, z}, got number 0",
  function() k:launch({grid = 0, block = 1}) end)
expect_error("k:launch: cfg.block must be an integer from 1 to 1024 or {x, y, z}, got number 2.5",
  function() k:launch({grid = 1, block = 2.5}) end)
expect_error("k:launch: cfg.block[3] must be an integer from 1 to 64, got number 65",
  function() k:launch({grid = 1, block = {1, 1, 65}}) end)
expect_error("k:launch: cfg.grid[2] must be an integer from 1 to 65535, got number 70000",
  function() k:launch({grid = {1, 70000}, block = 1}) end)
expect_error("k:launch: a block of 32 x 32 x 2 = 2048 threads; at most 1024",
  function() k:launch({grid = 1, block = {32, 32, 2}}) end)
expect_error("k:launch: cfg.shared (dynamic shared memory) must be a byte count >= 0, got number -1",
  function() k:launch({grid = 1, block = 1, shared = -1}) end)
k:launch({grid = {2, 2, 2}, block = {x = 4, y = 2}, shared = 1024})
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "a compile error shows the compiler log with snippet lines and the script line",
                 "[unit][lua][kernel]") {
  run(R"LUA(
local line = debug.getinfo(1, "l").currentline + 1
local ok, err = pcall(iris.compile, [[
__global__ void k(int* p) {
  p[0] = 1;
  p[1] = missing_variable;
}]])
assert(not ok)
assert(err:find("test.lua:" .. line .. ": cannot compile the snippet at test.lua:" .. line .. " for ", 1, true), err)
assert(err:find("snippet:3:", 1, true), err)
assert(err:find("missing_variable", 1, true), err)

local ok2, err2 = pcall(iris.compile, "__global__ void k() { nope(); }", {name = "mine"})
assert(err2:find("cannot compile mine (the snippet at test.lua:", 1, true), err2)
assert(err2:find("mine:1:", 1, true), err2)
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "compile_file reports errors at the file's own lines", "[unit][lua][kernel]") {
  const std::string path = iris::test::test_cache_dir() + "/tmp/broken_kernel.hip";
  iris::compiler::make_directories(iris::test::test_cache_dir() + "/tmp");
  std::ofstream(path) << "// line 1\n__global__ void k(int* p) {\n  p[0] = not_declared;\n}\n";
  run("local ok, err = pcall(iris.compile_file, '" + path + "')\n"
      "assert(not ok)\n"
      "assert(err:find('cannot compile " + path + " for ', 1, true), err)\n"
      "assert(err:find('" + path + ":3:', 1, true), err)\n"
      "expect_error('iris.compile_file: cannot open /no/such/file.hip', iris.compile_file, '/no/such/file.hip')\n");
}

TEST_CASE_METHOD(LuaKernelFixture, "templates by instance name, defines, options and unknown names", "[unit][lua][kernel]") {
  run(R"LUA(
local mod = iris.compile([[
  template <typename T>
  __global__ void fill(T* x, int n) { for (int i = 0; i < n; ++i) x[i] = static_cast<T>(VALUE * FACTOR); }
  __global__ void flag(int* out) { out[0] = ENABLED; }
]], {defines = {VALUE = 3, FACTOR = "2", ENABLED = true}, options = {"-O1"}})
local t = tensor("int64", 4)
local k = mod:kernel("fill<int64_t>")
assert(mod:kernel("fill< int64_t >") == k)
k:launch({grid = 1, block = 1}, t, 4)
assert(t.storage[3] == 6)
expect_error("argument 1 'x' (int64_t*) expects an int64 tensor, got a float32 tensor",
  function() k:launch({grid = 1, block = 1}, tensor("float32", 1), 1) end)
local flag = tensor("int32", 1)
mod.flag:launch({grid = 1, block = 1}, flag)
assert(flag.storage[0] == 1)
expect_error("has no kernel named 'nothing'; its kernels: fill<T>, flag", function() return mod.nothing end)
expect_error("kernel fill (test.lua:2) is a template: name an instance, e.g. fill<float>", function() return mod.fill end)
expect_error("compile options: unknown option 'define' (did you mean 'defines'? options: defines, options, name)",
  iris.compile, "__global__ void k() {}", {define = {}})
expect_error("compile options: defines.X must be a number, string or boolean, got a table",
  iris.compile, "__global__ void k() {}", {defines = {X = {}}})
expect_error("iris.compile(source [, opts]): source must be a string of HIP C++, got nil", iris.compile)
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "a device fault surfaces later, at the next launch or synchronization, with the kernel's label",
                 "[unit][lua][kernel]") {
  run(R"LUA(
local mod = iris.compile("__global__ void crash(int* p) { p[threadIdx.x] = 1; }")
local good = tensor("int32", 1)
mod.crash:launch({grid = 1, block = 1}, good)  -- fine
local bad = setmetatable({dtype = "int32", data_ptr = function() return require("ffi").cast("void*", 8) end},
                         getmetatable(good))
mod.crash:launch({grid = 1, block = 1}, bad)  -- asynchronous: no error yet
-- The device stays faulted: the next launch reports the fault, at the user's line.
local err = expect_error("device fault in kernel crash (test.lua:2) on rank 0: illegal address",
  function() mod.crash:launch({grid = 1, block = 1}, good) end)
assert(err:find("^test.lua:%d+:"), err)
)LUA");
}

TEST_CASE_METHOD(LuaKernelFixture, "iris.bench times a function with the device's events", "[unit][lua][kernel]") {
  run(R"LUA(
local k = iris.compile("__global__ void spin(int* p) { for (int i = 0; i < 1000; ++i) p[threadIdx.x] += i; }").spin
local t = tensor("int32", 64)
local calls = 0
local r = iris.bench(function() calls = calls + 1; k:launch({grid = 1, block = 64}, t) end, {warmup = 2, iters = 5})
assert(calls == 7, calls)
assert(r.iters == 5)
assert(r.min_ms > 0 and r.min_ms <= r.median_ms and r.median_ms <= r.mean_ms * 5)
expect_error("iris.bench: iters must be an integer >= 1, got number 0", iris.bench, function() end, {iters = 0})
expect_error("iris.bench(fn [, {warmup=, iters=}]): fn must be a function, got nil", iris.bench)
local seconds, host_seconds = k:time_raw_launches({grid = 1, block = 64}, 10, t)
assert(seconds > 0 and host_seconds == seconds) -- (the cpu backend runs each launch to completion)
)LUA");
}
