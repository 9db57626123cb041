-- launch_bench: the cost of k:launch from Lua against the backend's raw launch loop (Backend::time_raw_launches), same kernel, same process.
--   iris-lua scripts/bench/launch_bench.lua [launches] [--csv FILE] [--json FILE]
local ffi = require "ffi"
local opts = iris.options(arg, {
  name = "launch_bench",
  about = "the cost of k:launch from Lua against the backend's raw launch loop, same kernel, same process",
  positional = { { "launches", 20000, "launches timed per measurement", type = "integer", min = 1 } },
})
if not opts then return end
local ctx = iris.init {}
local launches = opts.launches
local results = {}

local mod = iris.compile [[
__global__ void empty(int* p) {}
__global__ void several(float* buf, long n, float scale, bool flag, iris::Context ctx) {}
]]
local buf = ctx:zeros(256)
local cfg = { grid = 1, block = 32 }
local function now() return ffi.C.iris_wall_time() end

-- `launch()` launches once with fixed arguments, as a script's own loop would (forwarding `...` through
-- a loop is not JIT-compiled by LuaJIT, so the benchmark does not do it); `raw(n)` times n raw launches.
local function measure(name, launch, raw)
  for _ = 1, 100 do launch() end -- warm: JIT traces, caches
  ctx:synchronize()
  local start = now()
  for _ = 1, launches do launch() end
  ctx:synchronize()
  local lua_us = (now() - start) / launches * 1e6
  local raw_s, raw_host_s = raw(launches)
  local raw_us, raw_issue_us = raw_s / launches * 1e6, raw_host_s / launches * 1e6
  print(("rank %d, backend %s, %s: k:launch %.2f us, raw launch %.2f us per launch (the host's issue %.2f): "
    .. "Lua / raw = %.2f"):format(ctx.rank, ctx.backend, name, lua_us, raw_us, raw_issue_us, lua_us / raw_us))
  results[#results + 1] = { kernel = name, launches = launches, lua_us = lua_us, raw_us = raw_us,
    raw_issue_us = raw_issue_us, ratio = lua_us / raw_us }
end

local flag = ctx:zeros(1, "int32")
local empty, several = mod.empty, mod.several
measure("empty(int*)", function() empty:launch(cfg, flag) end,
  function(n) return empty:time_raw_launches(cfg, n, flag) end)
measure("several(float*, long, float, bool, ctx)", function() several:launch(cfg, buf, 256, 0.5, true, ctx) end,
  function(n) return several:time_raw_launches(cfg, n, buf, 256, 0.5, true, ctx) end)
iris.options.write(opts, results, { columns = { "kernel", "launches", "lua_us", "raw_us", "raw_issue_us", "ratio" },
  setting = { ranks = ctx.world_size, backend = ctx.backend, device = ctx.device_name } })
