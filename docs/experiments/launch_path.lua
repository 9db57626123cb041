-- Where a collective's launch spends the host's time beyond the driver's (docs/perf.md, "A call on new
-- tensors"): at one rank, host us per launch (a loop that does not wait, then one wait) of
--   the one-way all_reduce kernel through k:launch, with its arguments unpacked from a table (as ccl.lua
--   launches) and written out; the same kernel's raw driver loop (the host's issue alone);
--   an empty kernel of the same nine parameters, the same grid and block, through k:launch and raw;
--   an empty kernel of one parameter, the same grid and block, through k:launch and raw.
--   iris-lua docs/experiments/launch_path.lua [launches, default 20000]
local ffi = require "ffi"
local function now_us() return ffi.C.iris_wall_time() * 1e6 end -- (a steady clock)

local ctx = iris.init {}
local launches = tonumber(arg[1] or 20000)
local n = 1024
local inp, out = ctx:ones(n), ctx:zeros(n)
local ll = require("iris.kernel").builtin("ccl/all_reduce").ccl_ll_all_reduce
-- The arguments and configuration ctx.ccl.all_reduce launches with (caught from one call).
local real, real_list, caught = ll.launch, ll.launch_list, nil
ll.launch = function(self, cfg, ...) caught = { cfg = cfg, args = { ... } } end -- (builds before launch_list)
ll.launch_list = function(self, cfg, args) caught = { cfg = cfg, args = args } end
ctx.ccl.all_reduce(out, inp, { variant = "ll" })
ll.launch, ll.launch_list = real, real_list
local cfg, args = caught.cfg, caught.args
local a1, a2, a3, a4, a5, a6, a7, a8, a9 = unpack(args)

local mod = iris.compile [[
__global__ void same_params(const void* inp, void* out, long count, int dtype, int op, int variant, uint32_t lo,
                            uint32_t hi, iris::Context ctx) {}
__global__ void one_param(int* flag) {}
]]
local flag = ctx:zeros(1, "int32")

local function per_launch(fn)
  for _ = 1, 200 do fn() end
  ctx:synchronize()
  local t0 = now_us()
  for _ = 1, launches do fn() end
  local us = (now_us() - t0) / launches
  ctx:synchronize()
  return us
end
local function raw_issue(k, ...)
  local device, host = k:time_raw_launches(cfg, launches, ...)
  host = host or device -- (builds before it returned the host's time: the loop's pace)
  return host * 1e6 / launches, device * 1e6 / launches
end

local rows = {}
local function row(name, us, device_us)
  rows[#rows + 1] = ("  %-58s %7.2f%s"):format(name, us, device_us and ("   (device %.2f)"):format(device_us) or "")
end
row("ccl_ll_all_reduce: k:launch(cfg, unpack(args))", per_launch(function() ll:launch(cfg, unpack(args)) end))
row("ccl_ll_all_reduce: k:launch(cfg, a1, ..., a9)", per_launch(function() ll:launch(cfg, a1, a2, a3, a4, a5, a6, a7, a8, a9) end))
if ll.launch_list then
  row("ccl_ll_all_reduce: k:launch_list(cfg, args) (as ctx.ccl launches)", per_launch(function() ll:launch_list(cfg, args) end))
end
row("ccl_ll_all_reduce: raw driver loop, the host's issue", raw_issue(ll, unpack(args)))
local same = mod.same_params
row("empty, the same 9 parameters: k:launch", per_launch(function() same:launch(cfg, a1, a2, a3, a4, a5, a6, a7, a8, a9) end))
row("empty, the same 9 parameters: raw driver loop, the host's issue", raw_issue(same, unpack(args)))
local one = mod.one_param
row("empty, 1 parameter: k:launch", per_launch(function() one:launch(cfg, flag) end))
row("empty, 1 parameter: raw driver loop, the host's issue", raw_issue(one, flag))
print(("launch path at one rank, %s, grid %s x block %s, host us per launch:"):format(ctx.device_name,
  tostring(cfg.grid), tostring(cfg.block)))
for _, r in ipairs(rows) do print(r) end
