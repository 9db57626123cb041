-- Where a small collective's time goes (docs/perf.md, "The fixed cost of a call"): per call, the
-- host's time to issue it (no waiting) and the device-timed time of back-to-back calls, for an empty
-- kernel (from Lua and straight through the driver) and for every all_reduce variant at one size.
--   mpirun -np N iris-lua docs/experiments/ccl_fixed_cost.lua [bytes, default 4096] [calls, default 2000]
-- With ncu (one rank: a replayed kernel cannot meet its peers): `ncu --metrics gpu__time_duration.sum
-- -k regex:ccl iris-lua docs/experiments/ccl_fixed_cost.lua 4096 20`.
local ffi = require "ffi"
local function now_us() return ffi.C.iris_wall_time() * 1e6 end -- (a steady clock)

local ctx = iris.init {}
local bytes = tonumber(arg[1] or 4096)
local calls = tonumber(arg[2] or 2000)
local slowest = function(v) return require("iris.broadcast").slowest(v, "ccl_fixed_cost") end

-- us per call: host issue (calls without waiting, then the wait excluded) and device (events around the
-- whole loop, so it includes whatever the host could not hide).
local function measure(fn)
  for _ = 1, 20 do fn() end
  ctx:barrier()
  local t0 = now_us()
  for _ = 1, calls do fn() end
  local issue = (now_us() - t0) / calls
  ctx:barrier()
  local r = iris.bench(function() for _ = 1, calls do fn() end end, { warmup = 1, iters = 3 })
  return slowest(issue), slowest(r.median_ms * 1e3 / calls)
end

local rows = {}
local mod = iris.compile [[__global__ void empty_kernel(int* p) {}]]
local p = ctx:zeros(1, "int32")
local issue, device = measure(function() mod.empty_kernel:launch({ grid = 1, block = 32 }, p) end)
rows[#rows + 1] = { "empty kernel from Lua", issue, device }
local raw = mod.empty_kernel:time_raw_launches({ grid = 1, block = 32 }, calls, p) * 1e6 / calls
rows[#rows + 1] = { "empty kernel, raw driver loop", raw, raw }

-- The launch a call makes, caught instead of launched: its kernel, configuration and arguments.
local function launch_of(call)
  local module = require("iris.kernel").builtin("ccl/all_reduce")
  local kernels = { module.ccl_all_reduce, module.ccl_ll_all_reduce }
  local saved, caught = {}, nil
  for i, k in ipairs(kernels) do -- (ctx.ccl launches through k:launch_list; k:launch in builds before it)
    saved[i] = { k.launch, k.launch_list }
    k.launch = function(self, cfg, ...) caught = { kernel = self, cfg = cfg, args = { ... } } end
    k.launch_list = function(self, cfg, args) caught = { kernel = self, cfg = cfg, args = args } end
  end
  call()
  for i, k in ipairs(kernels) do k.launch, k.launch_list = saved[i][1], saved[i][2] end
  return caught
end

local n = math.max(1, math.floor(bytes / 4))
local inp, out = ctx:ones(n), ctx:zeros(n)
for _, variant in ipairs { "auto", "ll", "ll_two_shot", "one_shot", "two_shot" } do
  local opts = { variant = variant }
  local ok = pcall(ctx.ccl.all_reduce, out, inp, opts)
  if ok then
    issue, device = measure(function() ctx.ccl.all_reduce(out, inp, opts) end)
    rows[#rows + 1] = { "all_reduce " .. variant, issue, device }
    -- the same kernel launched straight through the driver, the same arguments every time: what the
    -- kernel costs without iris's host path (the call counters live on the device, so each is a call)
    local l = launch_of(function() ctx.ccl.all_reduce(out, inp, opts) end)
    ctx:barrier()
    local us = l.kernel:time_raw_launches(l.cfg, calls, unpack(l.args)) * 1e6 / calls
    rows[#rows + 1] = { "  the same kernel, raw driver loop", us, us }
  end
end
ctx:barrier()
if ctx.rank == 0 then
  print(("%d rank(s), %s, %d bytes, %d calls; us per call (slowest rank)"):format(ctx.world_size, ctx.device_name,
    bytes, calls))
  print(("%-32s %12s %12s"):format("what", "host issue", "device"))
  for _, r in ipairs(rows) do print(("%-32s %12.2f %12.2f"):format(r[1], r[2], r[3])) end
end
