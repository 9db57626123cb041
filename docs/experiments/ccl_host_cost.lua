-- The host's share of a small collective (docs/perf.md, "The fixed cost of a call"), at one rank: per
-- call, ctx.ccl.all_reduce as a script makes it, the same with its launch replaced by nothing (the Lua
-- policy alone: checks, plan, marshalling skipped; repeated calls, then calls on 8 tensor pairs in turn), the launch function alone (argument checks and the
-- driver call), and the kernel straight through the driver. Host clock, no waiting inside the loop.
--   iris-lua [-jv=FILE] docs/experiments/ccl_host_cost.lua [bytes, default 4096] [calls, default 20000]
local ffi = require "ffi"
local function now_us() return ffi.C.iris_wall_time() * 1e6 end -- (a steady clock)

local ctx = iris.init {}
local bytes = tonumber(arg[1] or 4096)
local calls = tonumber(arg[2] or 20000)
local n = math.max(1, math.floor(bytes / 4))
local inp, out = ctx:ones(n), ctx:zeros(n)
local module = require("iris.kernel").builtin("ccl/all_reduce")

local function per_call(fn)
  for _ = 1, 100 do fn() end
  ctx:synchronize()
  local t0 = now_us()
  for _ = 1, calls do fn() end
  local us = (now_us() - t0) / calls
  ctx:synchronize()
  return us
end

local rows = {}
for _, variant in ipairs { "ll", "one_shot" } do
  local opts = { variant = variant }
  local k = variant == "ll" and module.ccl_ll_all_reduce or module.ccl_all_reduce
  rows[#rows + 1] = { variant .. ": ctx.ccl.all_reduce", per_call(function() ctx.ccl.all_reduce(out, inp, opts) end) }
  -- ctx.ccl launches through k:launch_list(cfg, args) (k:launch(cfg, unpack(args)) in builds before it)
  local real, real_list, caught = k.launch, k.launch_list, nil
  k.launch = function(self, cfg, ...) caught = { cfg = cfg, args = { ... } } end
  k.launch_list = function(self, cfg, args) caught = { cfg = cfg, args = args } end
  rows[#rows + 1] = { variant .. ": the Lua policy alone", per_call(function() ctx.ccl.all_reduce(out, inp, opts) end) }
  -- a call that does not repeat the one before (another pair of tensors each time): the whole policy
  local pairs_of, c = {}, 0
  for i = 1, 8 do pairs_of[i] = { ctx:ones(n), ctx:zeros(n) } end
  rows[#rows + 1] = { variant .. ": the same, 8 tensor pairs in turn", per_call(function()
    c = c % 8 + 1
    ctx.ccl.all_reduce(pairs_of[c][2], pairs_of[c][1], opts)
  end) }
  k.launch, k.launch_list = real, real_list
  local cfg, args = caught.cfg, caught.args
  rows[#rows + 1] = { variant .. ": k:launch(cfg, unpack(args)) alone", per_call(function() k:launch(cfg, unpack(args)) end) }
  if k.launch_list then -- (how ctx.ccl launches; builds before it had only the line above)
    rows[#rows + 1] = { variant .. ": k:launch_list(cfg, args) alone", per_call(function() k:launch_list(cfg, args) end) }
  end
  local raw, raw_host = k:time_raw_launches(cfg, calls, unpack(args))
  rows[#rows + 1] = { variant .. ": raw driver loop (device-bound if slower)", raw * 1e6 / calls }
  rows[#rows + 1] = { variant .. ": raw driver loop, the host's issue alone", raw_host * 1e6 / calls }
end
print(("host cost of a call, %s, %d bytes, us per call:"):format(ctx.device_name, bytes))
for _, r in ipairs(rows) do print(("  %-44s %8.2f"):format(r[1], r[2])) end
