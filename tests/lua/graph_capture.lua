-- ctx:capture(fn), g:replay([n]), g:free() (docs/graphs.md): replays give what running fn's launches
-- again gives, a loop of user kernels and device barriers replay, what cannot run inside a capture is
-- an error naming it and its line on every rank, a failed capture leaves nothing behind, a graph
-- whose tensor was freed refuses to replay, ranks that capture different collectives all fail.
-- The same file runs on a GPU (IRIS_TEST_BACKEND=cuda): every expectation holds on every backend.
local json = require "iris.json"
local ctx = iris.init { heap_size = "32MiB" }
local rank, world = ctx.rank, ctx.world_size
local N = 1000
local cfg = { grid = iris.cdiv(N, 256), block = 256 }

local mod = iris.compile [[
__global__ void add(float* x, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}
__global__ void scale(float* x, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= v;
}
// x[i] = x[i] * 3 + step * (i % 7): each step's result depends on the order of the steps.
__global__ void step(float* x, int n, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 3.0f + static_cast<float>(step * (i % 7));
}
// Counts its runs, sends the count to the next rank's inbox, adds what its own inbox holds to total.
__global__ void count(int64_t* runs) { runs[0] += 1; }
__global__ void send(const int64_t* runs, int64_t* inbox, iris::Context ctx) {
  ctx.store(inbox, runs[0], (ctx.rank + 1) % ctx.world_size);
}
__global__ void gather(const int64_t* inbox, int64_t* total) { total[0] += inbox[0]; }
]]

-- The same steps, run now (eager) or captured: what each replay must equal.
local function steps(x)
  mod.add:launch(cfg, x, N, 1.5)
  mod.scale:launch(cfg, x, N, 0.5)
  mod.step:launch(cfg, x, N, 4)
end

-- The file's line of `fn`, a one-line function: where an error inside it is raised.
local function line_of(fn) return debug.getinfo(fn, "S").linedefined end

iris.test("nothing runs during a capture; each replay equals running the launches again", function()
  local x, expected = ctx:zeros(N), ctx:zeros(N)
  local g = ctx:capture(function() steps(x) end)
  iris.assert_equal(g.kernels, 3)
  iris.assert_equal(x, 0) -- recorded, not run
  for replays = 1, 3 do
    g:replay()
    steps(expected)
    iris.assert_equal(x, expected, "after replay " .. replays)
  end
  assert(tostring(g):find("iris graph captured at .*graph_capture.lua:%d+: 3 kernels"), tostring(g))
  g:free()
end)

iris.test("g:replay(n) replays n times, and n = 0 does nothing", function()
  local x, expected = ctx:zeros(N), ctx:zeros(N)
  local g = ctx:capture(function() steps(x) end)
  g:replay(5)
  for _ = 1, 5 do steps(expected) end
  iris.assert_equal(x, expected)
  g:replay(0)
  iris.assert_equal(x, expected)
  for _, bad in ipairs { -1, 1.5, "2", {} } do
    local ok, err = pcall(g.replay, g, bad)
    assert(not ok and err:find("g:replay%(%[n%]%): n must be a whole number of replays >= 0"), err)
  end
  g:free()
end)

iris.test("a captured loop of user kernels replays as the loop runs", function()
  local x, expected = ctx:full(N, 1), ctx:full(N, 1)
  local g = ctx:capture(function()
    for i = 1, 20 do mod.step:launch(cfg, x, N, i % 5) end
  end)
  iris.assert_equal(g.kernels, 20)
  g:replay(2)
  for _ = 1, 2 do
    for i = 1, 20 do mod.step:launch(cfg, expected, N, i % 5) end
  end
  iris.assert_allclose(x, expected, { rtol = 1e-6 })
  g:free()
end)

iris.test("device barriers replay: graphs and eager barriers count the same epochs", function()
  local runs, inbox, total = ctx:zeros(1, "int64"), ctx:zeros(1, "int64"), ctx:zeros(1, "int64")
  ctx:barrier()
  local g = ctx:capture(function()
    mod.count:launch({ grid = 1, block = 1 }, runs)
    mod.send:launch({ grid = 1, block = 1 }, runs, inbox, ctx)
    ctx:device_barrier() -- the previous rank's count has arrived
    mod.gather:launch({ grid = 1, block = 1 }, inbox, total)
    ctx:device_barrier() -- nobody overwrites an inbox before its owner read it
  end)
  iris.assert_equal(g.kernels, 5)
  g:replay(3)
  ctx:device_barrier() -- an eager one between replays: its epoch follows the graph's
  g:replay()
  ctx:device_barrier()
  g:replay(2)
  iris.assert_equal(runs, 6)
  iris.assert_equal(total, 6 * 7 / 2) -- the previous rank's counts 1 + 2 + ... + 6
  ctx:barrier()
  g:free()
end)

iris.test("kernels compiled inside the capture are recorded too", function()
  local x = ctx:zeros(N)
  local g = ctx:capture(function()
    local late = iris.compile [[
__global__ void late_fill(float* x, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
]]
    late.late_fill:launch(cfg, x, N, 7)
  end)
  iris.assert_equal(x, 0)
  g:replay()
  iris.assert_equal(x, 7)
  g:free()
end)

-- What cannot run inside a capture: rank 0 tries it (the other ranks' fn does nothing), and every rank
-- gets an error naming the operation and the line; the context works afterwards. (No `return f()`: a
-- tail call leaves no frame of its line, so an error names the caller's line, as any error would.)
local t, u = ctx:zeros(4), ctx:zeros(4)
local forbidden = {
  { "ctx:barrier()", function() ctx:barrier() end },
  { "ctx:synchronize()", function() ctx:synchronize() end },
  { "t:to_table()", function() local _ = t:to_table() end },
  { "t[i]", function() local _ = t[1] end },
  { "t[i] = v", function() t[1] = 2 end },
  { "t:item()", function() local _ = t:narrow(1, 1, 1):item() end },
  { "ctx:zeros()", function() local _ = ctx:zeros(4) end },
  { "t:clone()", function() local _ = t:clone() end },
  { "t:fill()", function() t:fill(1) end },
  { "t:copy()", function() t:copy(u) end },
  { "ctx:broadcast()", function() local _ = ctx:broadcast(1) end },
  { "iris.assert_equal()", function() iris.assert_equal(t, 0) end },
  { "iris.bench()", function() iris.bench(function() end) end },
  { "add:time_raw_launches()", function() mod.add:time_raw_launches(cfg, 1, t, 4, 1) end },
  { "iris.trace.start()", function() iris.trace.start("never.json") end },
  { "ctx:capture()", function() ctx:capture(function() end) end },
}

iris.test("what makes the host wait is an error naming it and its line, on every rank", function()
  for _, case in ipairs(forbidden) do
    local what, fn = case[1], case[2]
    local at = ("graph_capture.lua:%d: %s"):format(line_of(fn), what)
    local ok, err = pcall(ctx.capture, ctx, function()
      mod.add:launch(cfg, t, 4, 1) -- recorded, then dropped with the failed capture
      if rank == 0 then fn() end
    end)
    assert(not ok, what .. ": the capture succeeded")
    err = tostring(err)
    assert(err:find(at, 1, true), ("%s: the message does not name the operation at its line (%s): %s"):format(what,
      at, err))
    if rank ~= 0 then
      assert(err:find("ctx:capture(fn) failed on rank 0, so no rank keeps its graph", 1, true), err)
    end
    -- The context works: nothing was left recorded, the next launch runs at once.
    ctx:barrier()
    mod.add:launch(cfg, t, 4, 1)
    iris.assert_equal(t, 1, "after " .. what)
    t:fill(0)
  end
end)

iris.test("a failed capture leaves nothing half-recorded", function()
  local x = ctx:zeros(N)
  local ok, err = pcall(ctx.capture, ctx, function()
    steps(x)
    error("stop here")
  end)
  assert(not ok and tostring(err):find("stop here", 1, true), tostring(err))
  iris.assert_equal(x, 0) -- the launches before the error never ran
  local g = ctx:capture(function() mod.add:launch(cfg, x, N, 2) end)
  iris.assert_equal(g.kernels, 1) -- the next capture holds its own launch only
  g:replay()
  iris.assert_equal(x, 2)
  g:free()
  local bad = pcall(ctx.capture, ctx, 42)
  assert(not bad)
end)

iris.test("a graph whose tensor was freed, or that was freed, refuses to replay", function()
  local x, y = ctx:zeros(N), ctx:zeros(N)
  local g = ctx:capture(function()
    mod.add:launch(cfg, x, N, 1)
    mod.add:launch(cfg, y, N, 1)
  end)
  g:replay()
  local freed_line = line_of(function() y:free() end)
  y:free()
  local ok, err = pcall(g.replay, g)
  assert(not ok and err:find("g:replay: the graph captured at .*graph_capture.lua:%d+ launches add %(.*%) on a "
    .. "tensor that was freed since %(t:free%(%) at .*graph_capture.lua:" .. (freed_line + 1) .. "%)"), err)
  iris.assert_equal(x, 1) -- nothing of the refused replay ran
  g:free()
  g:free() -- twice is harmless
  ok, err = pcall(g.replay, g)
  assert(not ok and err:find("g:replay: this graph was freed (g:free() at ", 1, true), err)
  assert(tostring(g):find("(freed)", 1, true))
end)

iris.test("ranks that capture different collectives all fail, within the capture", function()
  if world < 2 then iris.skip("one rank captures alone") end
  local ok, err = pcall(ctx.capture, ctx, function()
    if rank == 0 then ctx:device_barrier() end
  end)
  assert(not ok, "a capture with a collective on rank 0 only succeeded")
  assert(tostring(err):find("ctx:capture(fn): the ranks captured different collectives (rank 0 captured "
    .. "ctx:device_barrier() (", 1, true), err)
  assert(tostring(err):find("as its 1st collective with rank 1, which captured nothing there", 1, true), err)
  -- The same collectives on every rank, on different lines, capture.
  local g = ctx:capture(function()
    if rank == 0 then ctx:device_barrier() else ctx:device_barrier() end
  end)
  g:replay(2)
  ctx:synchronize()
  g:free()
end)

iris.test("a replay is one span of a trace, on the host and on the device", function()
  local path = ctx:broadcast(rank == 0 and os.tmpname() or nil)
  local x = ctx:zeros(N)
  iris.trace.start(path)
  local g = ctx:capture(function() steps(x) end)
  g:replay(4)
  local summary = iris.trace.stop()
  g:free()
  iris.assert_equal(summary.launches, 1) -- the replay, timed as one
  if rank == 0 then
    local file = assert(io.open(path, "rb"))
    local trace = json.decode(file:read("*a"))
    file:close()
    for r = 0, world - 1 do
      local found = { capture = 0, recorded = 0, replay_host = 0, replay_device = 0 }
      for _, e in ipairs(trace.traceEvents) do
        if e.pid == r and e.ph == "X" then
          if e.cat == "capture" and e.name == "capture" then found.capture = found.capture + 1 end
          if e.cat == "capture" and e.name ~= "capture" then found.recorded = found.recorded + 1 end
          if e.name == "replay" and e.cat == "launch" then
            found.replay_host = found.replay_host + 1
            iris.assert_equal(e.args.times, 4)
            iris.assert_equal(e.args.kernels, 3)
          end
          if e.name == "replay" and e.cat == "kernel" then found.replay_device = found.replay_device + 1 end
        end
      end
      iris.assert_equal(found, { capture = 1, recorded = 3, replay_host = 1, replay_device = 1 }, "rank " .. r)
    end
    os.remove(path)
  end
  ctx:barrier()
end)
