-- Single rows of ops_bench's "GEMM alone" several times slower than the same call in another run
-- (docs/perf.md, "The GEMM alone's slow rows"): at one rank, ctx.ops.matmul on fresh operands, rounds of
-- each shape and dtype in turn, beside cuBLAS on the same operands. Each call is timed three ways:
--   bench: iris.bench (as ops_bench: an event, the call, an event, a wait; median and fastest of 5), so
--          the GPU idles while the host issues the call and whatever the host does then is counted;
--   issue: the host's own time in the call (wall clock around it, the slowest of the 5);
--   lead:  the same events with a 300 us lead kernel enqueued before the first, so the GPU is busy while
--          the host issues the call: the device's time alone, unless the host took longer than the lead.
-- On the cpu backend, whose kernels run as they are launched (and without cuBLAS), lead is left out.
--   iris-lua docs/experiments/gemm_outliers.lua [rounds, default 3]
local ffi = require "ffi"
local errors = require "iris.errors"
local reference = require "iris.reference"
local ops = require "iris.ops"
local C = ffi.C
local rounds = tonumber(arg[1] or 3)
local ctx = iris.init { heap_size = "3GiB" }
local gpu = ctx.backend == "cuda"
local shapes = gpu and { { 16384, 8192, 512 }, { 8192, 8192, 1024 }, { 16384, 8192, 256 }, { 4096, 4096, 128 },
  { 4096, 4096, 256 } } or { { 128, 64, 32 } }
local spin = gpu and require("iris.kernel").builtin("bench_lead").iris_bench_lead -- (iris.bench's lead)
local timer_out = ffi.new("iris_timer*[1]")
errors.check(C.iris_timer_create(timer_out))
local timer = ffi.gc(timer_out[0], C.iris_timer_destroy)
local ms_out = ffi.new("double[1]")
local function now_us() return C.iris_wall_time() * 1e6 end

-- Five timed calls after two untimed: the median device ms with the lead, and the slowest host issue (us).
local function measured(fn)
  fn(); fn()
  local ms, issue = {}, 0
  for i = 1, 5 do
    if spin then spin:launch({ grid = 1, block = 1 }, 300000) end
    errors.check(C.iris_timer_start(timer))
    local t0 = now_us()
    fn()
    issue = math.max(issue, now_us() - t0)
    errors.check(C.iris_timer_stop(timer, ms_out))
    ms[i] = ms_out[0]
  end
  table.sort(ms)
  return ms[3], issue
end

local base = ffi.cast("uintptr_t", C.iris_heap_base(ctx.rank))
local function mib(t) return tonumber(ffi.cast("uintptr_t", t:data_ptr()) - base) / 2 ^ 20 end

print(("%-9s %-16s %3s %9s %9s %9s %9s | %9s %9s %9s | %s"):format("dtype", "M x N x K", "rnd", "bench ms", "fastest",
  "lead ms", "issue us", "cuBLAS", "lead", "issue us", "path; heap MiB of A B C"))
for round = 1, rounds do
  for _, dtype in ipairs { "float16", "bfloat16" } do
    for _, s in ipairs(shapes) do
      local m, n, k = s[1], s[2], s[3]
      local a, b = ctx:randint(-2, 3, { m, k }, dtype, 3), ctx:randint(-2, 3, { k, n }, dtype, 4)
      local c = ctx:zeros({ m, n }, dtype)
      local ours_fn = function() ctx.ops.matmul(c, a, b) end
      local theirs_fn = function() reference.gemm(c, a, b) end
      local ours = iris.bench(ours_fn, { warmup = 2, iters = 5 })
      local lead, issue = measured(ours_fn)
      local theirs, theirs_lead, theirs_issue
      if gpu then
        theirs = iris.bench(theirs_fn, { warmup = 2, iters = 5 }).median_ms
        theirs_lead, theirs_issue = measured(theirs_fn)
      end
      local why = not gpu and "no TMA here" or ops.tma_refuses({ name = dtype }, a, b, c)
      local function f(x, fmt) return x and (fmt or "%9.3f"):format(x) or ("%9s"):format("-") end
      print(("%-9s %-16s %3d %9.3f %9.3f %s %9.1f | %s %s %s | %s; %.3f %.3f %.3f"):format(dtype,
        ("%dx%dx%d"):format(m, n, k), round, ours.median_ms, ours.min_ms, f(spin and lead), issue, f(theirs),
        f(theirs_lead), f(theirs_issue, "%9.1f"), why and ("tile: " .. why) or "whole-kernel", mib(a), mib(b), mib(c)))
      a:free(); b:free(); c:free()
    end
  end
end
