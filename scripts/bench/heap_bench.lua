-- Symmetric heap cost: time to set up the heap (iris.init) and latency of a collective allocation plus free.
--   mpirun -np 2 iris-lua scripts/bench/heap_bench.lua [heap_size] [iterations] [--csv FILE] [--json FILE]
-- Prints one small table on rank 0. Setup time is the slowest rank's; latencies are medians over
-- `iterations` (default 2000) allocate+free pairs, timed on the host around the Lua calls.
local ffi = require "ffi"
local C = ffi.C

local opts = iris.options(arg, {
  name = "heap_bench",
  about = "symmetric heap cost: setting up the heap, and a collective allocation plus free",
  positional = {
    { "heap_size", "1GiB", "heap per rank", type = "bytes" },
    { "iterations", 2000, "allocate + free pairs timed per size", type = "integer", min = 1 },
  },
})
if not opts then return end
local heap_size = opts.heap_size
local iterations = opts.iterations
local results = {} -- for --csv and --json: { what, median_us, min_us }

-- Line the ranks up before timing the setup (the host collective works before iris.init).
local all = ffi.new("uint64_t[?]", iris.world_size())
assert(C.iris_announce("heap_bench: start", 0, nil) == 0)
local started = C.iris_wall_time()
local ctx = iris.init { heap_size = heap_size }
local setup_us = (C.iris_wall_time() - started) * 1e6
assert(C.iris_announce("heap_bench: setup time", math.floor(setup_us), all) == 0)
local slowest_setup = 0
for r = 0, ctx.world_size - 1 do slowest_setup = math.max(slowest_setup, tonumber(all[r])) end

local function median_and_min(samples)
  table.sort(samples)
  return samples[math.floor((#samples + 1) / 2)], samples[1]
end

-- allocate + free, `iterations` times; seconds per pair
local function measure(make, elements)
  local samples = {}
  for i = 1, iterations + 10 do
    local t0 = C.iris_wall_time()
    local t = make(ctx, elements, "uint8")
    t:free()
    local t1 = C.iris_wall_time()
    if i > 10 then samples[#samples + 1] = t1 - t0 end -- the first ones warm up the JIT and the pages
  end
  return median_and_min(samples)
end

local rows = {}
local function row(label, median, min)
  rows[#rows + 1] = ("%-34s %12s %12s"):format(label, median, min or "")
end
local function us(seconds) return ("%.1f us"):format(seconds * 1e6) end

row(("iris.init{heap_size=%s}"):format(ffi.string(C.iris_human_bytes(heap_size)):gsub(" ", "")),
  ("%.1f ms"):format(slowest_setup / 1000))
results[#results + 1] = { what = "iris.init", bytes = heap_size, median_us = slowest_setup }
for _, case in ipairs {
  { ctx.empty, "ctx:empty", 4096, "4 KiB" },
  { ctx.zeros, "ctx:zeros", 4096, "4 KiB" },
  { ctx.zeros, "ctx:zeros", 1024 * 1024, "1 MiB" },
  { ctx.zeros, "ctx:zeros", 64 * 1024 * 1024, "64 MiB" },
} do
  local median, min = measure(case[1], case[3])
  row(("%s(%s) + t:free()"):format(case[2], case[4]), us(median), us(min))
  results[#results + 1] = { what = case[2] .. " + t:free()", bytes = case[3], median_us = median * 1e6, min_us = min * 1e6 }
end

if ctx.rank == 0 then
  print(("heap_bench: backend %s (%s), %d rank(s), %d iterations"):format(ctx.backend, ctx.device_name,
    ctx.world_size, iterations))
  print(("%-34s %12s %12s"):format("what", "median", "min"))
  for _, line in ipairs(rows) do print(line) end
end
iris.options.write(opts, results, { columns = { "what", "bytes", "median_us", "min_us" },
  setting = { ranks = ctx.world_size, backend = ctx.backend, device = ctx.device_name, iterations = iterations } })
