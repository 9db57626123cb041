-- iris.trace from a script (docs/tracing.md): start/stop/mark/span/names, what stop returns, what the
-- file holds, the device buffer's bound, kernels compiled before the trace, and misuse.
local json = require "iris.json"
local ctx = iris.init { heap_size = "32MiB" }

-- A file name every rank agrees on (rank 0 makes it); removed by rank 0 at the end of the case.
local function shared_file()
  local name = ctx:broadcast(ctx.rank == 0 and os.tmpname() or nil)
  return name, function()
    ctx:barrier()
    if ctx.rank == 0 then os.remove(name) end
  end
end

local function read_trace(path)
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return json.decode(text)
end

-- This rank's events named `name` (any category when cat is nil).
local function events(trace, name, cat)
  local out = {}
  for _, e in ipairs(trace.traceEvents) do
    if e.pid == ctx.rank and e.name == name and (cat == nil or e.cat == cat) and e.ph ~= "M" then out[#out + 1] = e end
  end
  return out
end

local recorder = iris.compile [[
// Block b records `per_block` events of id `id` + (its index % 2), with target rank b % world and b bytes.
__global__ void record(unsigned int id, int per_block, iris::Context ctx) {
  for (int i = 0; i < per_block; ++i) {
    iris::TraceHandle h = ctx.trace_begin(id + i % 2, blockIdx.x % ctx.world_size, blockIdx.x);
    ctx.trace_end(h);
  }
}
// Which build ran: 1 compiled for a trace (IRIS_TRACE_DEVICE), 2 without.
__global__ void which_build(int* out) {
#ifdef IRIS_TRACE_DEVICE
  out[0] = 1;
#else
  out[0] = 2;
#endif
}
]]

iris.test("start and stop write one file with every rank, and stop returns this rank's figures", function()
  local path, done = shared_file()
  iris.trace.start(path)
  assert(iris.trace.running())
  recorder.record:launch({ grid = 2, block = 32 }, 7, 3, ctx)
  iris.trace.mark("between", { step = 1 })
  local summary = iris.trace.stop()
  assert(not iris.trace.running())
  iris.assert_equal(summary.file, path)
  iris.assert_equal(summary.launches, 1)
  iris.assert_equal(summary.device_events, 6)
  iris.assert_equal(summary.device_overflow, 0)
  assert(summary.host_events > 0 and summary.host_dropped == 0, "host events counted")
  assert(summary.clock_error_us >= 0 and math.abs(summary.clock_offset_us) <= summary.clock_error_us + 1,
    ("one node, one clock: offset %.3f us within its error %.3f us"):format(summary.clock_offset_us, summary.clock_error_us))
  local trace = read_trace(path)
  iris.assert_equal(#trace.metadata.ranks, ctx.world_size)
  iris.assert_equal(#events(trace, "record", "launch"), 1)
  iris.assert_equal(#events(trace, "record", "kernel"), 1)
  local mark = events(trace, "between", "user")
  iris.assert_equal(#mark, 1)
  iris.assert_equal(mark[1].args.step, 1)
  assert(mark[1].args.line:find("trace_api.lua:%d+$"), "the mark names the script line")
  -- Ids 7 and 8 are Iris's atomic_cas and atomic_xchg.
  iris.assert_equal(#events(trace, "atomic_cas", "device") + #events(trace, "atomic_xchg", "device"), 6)
  done()
end)

iris.test("the device buffer keeps what fits and counts the rest", function()
  local path, done = shared_file()
  iris.trace.start { file = path, device_events = 5 }
  recorder.record:launch({ grid = 4, block = 32 }, 3, 4, ctx) -- 16 events
  local summary = iris.trace.stop()
  iris.assert_equal(summary.device_events, 5)
  iris.assert_equal(summary.device_overflow, 11)
  local trace = read_trace(path)
  iris.assert_equal(#events(trace, "put", "device") + #events(trace, "copy", "device"), 5)
  iris.assert_equal(trace.metadata.ranks[ctx.rank + 1].device_events_overflow, 11)
  done()
end)

iris.test("user ids take the names iris.trace.names gives them", function()
  local path, done = shared_file()
  iris.trace.names { [4096] = "pack" }
  iris.trace.start(path)
  recorder.record:launch({ grid = 1, block = 32 }, 4096, 2, ctx)
  iris.trace.stop()
  local trace = read_trace(path)
  iris.assert_equal(#events(trace, "pack", "device"), 1)
  iris.assert_equal(#events(trace, "event 4097", "device"), 1)
  local pack = events(trace, "pack", "device")[1]
  iris.assert_equal(pack.args.target_rank, 0)
  iris.assert_equal(pack.tid, 1000)
  done()
end)

iris.test("a kernel compiled before the trace runs its traced build during it, the plain one after", function()
  local out = ctx:zeros(1, "int32")
  recorder.which_build:launch({ grid = 1, block = 1 }, out)
  iris.assert_equal(out:get(1), 2)
  local path, done = shared_file()
  iris.trace.start(path)
  recorder.which_build:launch({ grid = 1, block = 1 }, out)
  ctx:synchronize()
  local during = out:get(1)
  iris.trace.stop()
  recorder.which_build:launch({ grid = 1, block = 1 }, out)
  iris.assert_equal(during, 1)
  iris.assert_equal(out:get(1), 2)
  done()
end)

-- (ctx.ccl.broadcast: its kernel is the lightest of the collectives to compile in its traced build.)
iris.test("a ctx.ccl call is a span of category ccl with its plan, and each tile a device event", function()
  local n = 4096
  local t = ctx:full(n, ctx.rank + 1, "float32")
  local path, done = shared_file()
  iris.trace.start(path)
  ctx.ccl.broadcast(t, 0, { variant = "push", blocks = 2, block_m = 1, block_n = 1024 })
  iris.trace.stop()
  iris.assert_equal(t:get(n), 1)
  local trace = read_trace(path)
  local spans = events(trace, "ctx.ccl.broadcast", "ccl")
  iris.assert_equal(#spans, 1)
  local args = spans[1].args
  iris.assert_equal({ args.variant, args.bytes, args.dtype, args.members, args.blocks, args.tile, args.call },
    { "push", n * 4, "float32", ctx.world_size, 2, "1x1024", 1 })
  assert(args.line:find("trace_api.lua:%d+$"), "the span names the script line")
  iris.assert_equal(#events(trace, "ccl_broadcast", "kernel"), 1)
  -- The root copies 4 tiles of 1024 floats to the others: a copy event per tile; the others record none.
  local copies = events(trace, "copy", "device")
  iris.assert_equal(#copies, ctx.rank == 0 and 4 or 0)
  if ctx.rank == 0 then iris.assert_equal(copies[1].args.bytes, 4096) end
  done()
end)

iris.test("span returns what the function returns, inside a span of its own", function()
  local path, done = shared_file()
  iris.trace.start(path)
  local a, b = iris.trace.span("pair", function(x) return x, x + 1 end, 41)
  iris.trace.stop()
  iris.assert_equal(a, 41)
  iris.assert_equal(b, 42)
  iris.assert_equal(#events(read_trace(path), "pair", "user"), 1)
  done()
end)

iris.test("stop may name another file than start did", function()
  local path, done = shared_file()
  iris.trace.start()
  iris.trace.mark("named at stop")
  local summary = iris.trace.stop(path)
  iris.assert_equal(summary.file, path)
  iris.assert_equal(#events(read_trace(path), "named at stop", "user"), 1)
  done()
end)

iris.test("misuse is an error at the caller's line", function()
  local function fails(fn, pattern)
    local ok, message = pcall(fn)
    assert(not ok, "expected an error matching " .. pattern)
    assert(message:find(pattern), ("'%s' does not match '%s'"):format(message, pattern))
  end
  fails(function() iris.trace.stop() end, "trace_api.lua:%d+: iris.trace.stop: no trace is on")
  fails(function() iris.trace.start { files = "x" } end, "unknown option 'files'")
  fails(function() iris.trace.start { device_events = 0 } end, "device_events must be a whole number from 1")
  fails(function() iris.trace.mark(3) end, "iris.trace.mark%(name %[, args%]%): name must be a string")
  fails(function() iris.trace.names { [1.5] = "x" } end, "ids are whole numbers")
  local path, done = shared_file()
  iris.trace.start(path)
  fails(function() iris.trace.start(path) end, "a trace is already on")
  fails(function() iris.trace.mark("x", { f = print }) end, "f = a function is not")
  iris.trace.stop()
  done()
  -- Rank 0 cannot write there: every rank learns it, as the same error.
  fails(function() iris.trace.start("/nonexistent-dir/trace.json") end,
    "cannot write the trace to /nonexistent%-dir/trace.json")
  assert(not iris.trace.running())
end)
