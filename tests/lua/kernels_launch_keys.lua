-- A launch's cfg keys are checked at every launch by errors.check_keys (src/lua/iris/kernel.lua), which
-- walks up to three keys with next() and no loop. Here in loops LuaJIT compiles (the file's own functions
-- run interpreted: iris.testing), with cfg tables of every shape and key order, right and wrong, through
-- launch and launch_list; and graphs replayed between eager launches while the collector runs at every
-- step (docs/reliability.md, "check_keys": the crash this swap once caused was a LuaJIT miscompile).
local ctx = iris.init {}
local k = iris.compile([[
__global__ void bump(int32_t* count, int32_t by) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) count[0] += by;
}
]]).bump

-- Compiled loops: loaded here, so not under the runner's jit.off of this file. The chunk is named as a
-- script ("@"), so that an error inside blames its line as a script's.
local function compiled(source) return assert(loadstring(source, "@kernels_launch_keys.lua (compiled loop)")) end

local launch_all = compiled [[
local k, cfgs, count, n = ...
for i = 1, n do
  local cfg = cfgs[i % #cfgs + 1]
  if i % 2 == 0 then k:launch(cfg, count, 1) else k:launch_list(cfg, { count, 1 }) end
end
]]

local fail_all = compiled [[
local k, cfg, count, n = ...
local failures, message = 0, nil
for i = 1, n do
  local ok, err
  if i % 2 == 0 then ok, err = pcall(k.launch, k, cfg, count, 1) else ok, err = pcall(k.launch_list, k, cfg, { count, 1 }) end
  if not ok then failures, message = failures + 1, err end
end
return failures, message
]]

-- A table with `keys` set in this order (a different order can give a different hash layout, so next()
-- visits the keys in another order), after `dead` keys were set and removed again (next() skips them).
local function cfg_of(keys, dead)
  local t = {}
  for _, key in ipairs(dead or {}) do t[key] = 1 end
  for _, pair in ipairs(keys) do t[pair[1]] = pair[2] end
  for _, key in ipairs(dead or {}) do t[key] = nil end
  return t
end

local G, B, S = { "grid", 2 }, { "block", 32 }, { "shared", 0 }

iris.test("cfgs of every key order launch, compiled, through launch and launch_list", function()
  local cfgs = {
    { grid = 1, block = 32 }, { block = { 8, 4 }, grid = { 2, 1, 1 } }, { grid = 1, block = 32, shared = 64 },
    cfg_of { G, B }, cfg_of { B, G }, cfg_of { G, B, S }, cfg_of { G, S, B }, cfg_of { B, G, S },
    cfg_of { B, S, G }, cfg_of { S, G, B }, cfg_of { S, B, G },
    cfg_of({ G, B }, { "blocks", "x", "y", "z", "w" }), cfg_of({ S, B, G }, { "sharde" }),
  }
  local count = ctx:zeros(1, "int32")
  launch_all(k, cfgs, count, 600)
  iris.assert_equal(count, 600)
end)

-- A cfg whose traversal (next(), the order check_keys walks) meets the wrong key at `position` (1 to 4)
-- among good keys, whatever this process's hash layout: insertion orders, names and removed keys are
-- tried until next() shows that order.
local GOOD = { G, B, S }
local WRONG_NAMES = { "blocks", "sharde", "gird", "stream", "grids", "blok", "threads", "smem" }
local DEAD = { {}, { "x" }, { "x", "y" }, { "x", "y", "z", "w" }, { "a", "b", "c", "d", "e", "f", "g" } }

local function traversal(t)
  local order, key = {}, next(t)
  while key ~= nil do
    order[#order + 1] = key
    key = next(t, key)
  end
  return order
end

local function wrong_at(position)
  local goods = position == 4 and 3 or 2 -- the keys before the wrong one, and one after unless it is 4th
  for _, name in ipairs(WRONG_NAMES) do
    for _, dead in ipairs(DEAD) do
      for first = 1, 3 do
        local keys = {}
        for i = 0, goods - 1 do keys[#keys + 1] = GOOD[(first + i - 1) % 3 + 1] end
        for insert_at = 1, #keys + 1 do
          local with = { unpack(keys) }
          table.insert(with, insert_at, { name, 1 })
          local t = cfg_of(with, dead)
          if traversal(t)[position] == name then return t, name end
        end
      end
    end
  end
  error(("no cfg found whose traversal meets the wrong key at %d"):format(position))
end

iris.test("a wrong key is named at every launch, compiled, wherever next() meets it", function()
  local count = ctx:zeros(1, "int32")
  local wrong = {
    { { grid = 1, blocks = 32 }, "unknown cfg key 'blocks' (did you mean 'block'? cfg keys: grid, block, shared)" },
    { { 32, grid = 1, block = 32 }, "unknown cfg key '1'" }, -- an array part: next() visits it first
    { cfg_of({ { "gird", 1 } }, { "grid", "block" }), "unknown cfg key 'gird' (did you mean 'grid'?" },
  }
  for position = 1, 4 do
    local t, name = wrong_at(position)
    wrong[#wrong + 1] = { t, ("unknown cfg key '%s'"):format(name) }
  end
  for _, case in ipairs(wrong) do
    local failures, message = fail_all(k, case[1], count, 200)
    iris.assert_equal(failures, 200, case[2])
    assert(tostring(message):find("bump:launch: " .. case[2], 1, true), tostring(message))
  end
  iris.assert_equal(count, 0) -- a refused launch launches nothing
end)

iris.test("graphs replay between eager launches while the collector runs at every step", function()
  local count = ctx:zeros(1, "int32")
  local pause, stepmul = collectgarbage("setpause", 1), collectgarbage("setstepmul", 1000)
  local ok, err = pcall(function()
    local cfgs = { cfg_of { G, B }, cfg_of { B, S, G }, { grid = 1, block = 32 } }
    local g = ctx:capture(function()
      for i = 1, 4 do k:launch(cfgs[i % #cfgs + 1], count, i) end -- 1 + 2 + 3 + 4 = 10 a replay
    end)
    local expected = 0
    for r = 1, 30 do
      g:replay(r % 3 + 1)
      launch_all(k, cfgs, count, 20) -- eager launches in a compiled loop between the replays
      expected = expected + 10 * (r % 3 + 1) + 20
      collectgarbage()
    end
    g:free()
    iris.assert_equal(count, expected)
  end)
  collectgarbage("setpause", pause)
  collectgarbage("setstepmul", stepmul)
  assert(ok, err)
end)
