-- Graphs on a GPU (docs/graphs.md): a loop of small kernels, device barriers, ctx.ccl's all_reduce and
-- NCCL's on iris's stream beside a user kernel, each captured with ctx:capture and replayed; every
-- result is checked, and a short table compares eager calls with replays (microseconds per call, slowest rank).
-- Runs on any backend (the NCCL rows need NCCL or RCCL: on cpu they say why they are left out):
--   mpirun -np 2 iris-lua tests/gpu/graph_replay.lua          (tests/gpu/run_graphs.sh runs it)
local reference = require "iris.reference"
local slowest = require("iris.broadcast").slowest
local ctx = iris.init {}
local rank, world = ctx.rank, ctx.world_size

local mod = iris.compile [[
__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
__global__ void copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
]]

local N, LOOP, REPLAYS = 1024, 100, 20
local cfg = { grid = iris.cdiv(N, 256), block = 256 }
local rows = {}

-- Microseconds per call of `fn` (median of iris.bench's runs, slowest rank), `calls` calls per run.
local function per_call_us(fn, calls)
  local r = iris.bench(fn, { warmup = 2, iters = 10 })
  return slowest(r.median_ms * 1000 / calls, "graph_replay: timing")
end

local function row(what, eager, graph, note)
  rows[#rows + 1] = { what, eager, graph, note or "" }
end

-- 1. A loop of LOOP launches: eager, then captured and replayed.
do
  local x = ctx:zeros(N)
  local g = ctx:capture(function()
    for _ = 1, LOOP do mod.add_one:launch(cfg, x, N) end
  end)
  iris.assert_equal(x, 0) -- nothing ran during the capture
  g:replay(REPLAYS)
  iris.assert_equal(x, LOOP * REPLAYS)
  local eager = per_call_us(function() for _ = 1, LOOP do mod.add_one:launch(cfg, x, N) end end, LOOP)
  local graph = per_call_us(function() g:replay() end, LOOP)
  ctx:synchronize()
  local runs = LOOP * REPLAYS + LOOP * 12 + LOOP * 12 -- iris.bench: 2 warm-up and 10 timed runs each
  iris.assert_equal(x, runs)
  row(("%d launches of a small kernel"):format(LOOP), eager, graph, "per launch")
  g:free()
end

-- 2. Device barriers between kernels: their epochs are counted on the device, so replays stay in step.
do
  local x = ctx:zeros(N)
  local g = ctx:capture(function()
    for _ = 1, 10 do
      mod.add_one:launch(cfg, x, N)
      ctx:device_barrier()
    end
  end)
  g:replay(REPLAYS)
  ctx:device_barrier() -- eager ones agree with the graph's
  iris.assert_equal(x, 10 * REPLAYS)
  local eager = per_call_us(function()
    for _ = 1, 10 do
      mod.add_one:launch(cfg, x, N)
      ctx:device_barrier()
    end
  end, 10)
  local graph = per_call_us(function() g:replay() end, 10)
  ctx:synchronize()
  iris.assert_equal(x, 10 * (REPLAYS + 24))
  row("a kernel and a device barrier", eager, graph, "per pair")
  g:free()
end

-- 3. ctx.ccl.all_reduce and a user kernel (the calls are counted on the device: each replay is a new call):
-- each replay multiplies x by the world size.
do
  local x, y = ctx:ones(N), ctx:zeros(N)
  local function step()
    ctx.ccl.all_reduce(y, x)
    mod.copy:launch(cfg, x, y, N)
  end
  step() -- compiles the collective's kernel
  x:fill(1)
  ctx:barrier()
  local g = ctx:capture(step)
  g:replay(10)
  iris.assert_equal(x, world ^ 10)
  x:fill(1)
  ctx:barrier()
  local eager = per_call_us(step, 1)
  ctx:synchronize()
  iris.assert_equal(x, world ^ 12)
  x:fill(1)
  ctx:barrier()
  local graph = per_call_us(function() g:replay() end, 1)
  ctx:synchronize()
  iris.assert_equal(x, world ^ 12)
  row(("ctx.ccl.all_reduce of %d B and a kernel"):format(N * 4), eager, graph, "per pair")
  g:free()
end

-- 4. NCCL's all_reduce on iris's stream, then a user kernel, in one graph: each replay multiplies x by
-- the world size (x := sum over ranks of x).
local ref = reference.open(ctx)
if ref.name == "NCCL" or ref.name == "RCCL" then
  local x, y = ctx:ones(N), ctx:zeros(N)
  local function step()
    reference.run(ref, "all_reduce", x, y, N, "float32", "sum")
    mod.copy:launch(cfg, x, y, N)
  end
  local g = ctx:capture(step)
  iris.assert_equal(x, 1)
  g:replay(10)
  iris.assert_equal(x, world ^ 10)
  x:fill(1)
  ctx:barrier()
  local eager = per_call_us(step, 1)
  x:fill(1)
  ctx:barrier()
  local graph = per_call_us(function() g:replay() end, 1)
  ctx:synchronize()
  iris.assert_equal(x, world ^ 12)
  row(("%s all_reduce of %d B and a kernel"):format(ref.name, N * 4), eager, graph, "per pair")
  g:free()
  reference.close(ref)
else
  local why = ref.name == "MPI" and "MPI, the cpu backend's reference, waits on the host" or ref.why
  row("NCCL all_reduce and a kernel", nil, nil, "left out: " .. tostring(why))
  reference.close(ref)
end

if rank == 0 then
  print(("graph replays on %d rank(s), backend %s (%s): microseconds per call, slowest rank"):format(world,
    ctx.backend, ctx.device_name))
  print(("%-40s %10s %10s  %s"):format("what", "eager", "replayed", ""))
  for _, r in ipairs(rows) do
    local function us(v) return v and ("%10.2f"):format(v) or ("%10s"):format("-") end
    print(("%-40s %s %s  %s"):format(r[1], us(r[2]), us(r[3]), r[4]))
  end
  print("all results checked")
end
