-- ccl_rooted_bench: ctx.ccl's rooted collectives and point to point against the reference library in
-- the same run (NCCL on cuda, RCCL on hip, MPI on cpu): reduce (ncclReduce), broadcast (ncclBroadcast),
-- send/recv in a ring (ncclSend/ncclRecv, grouped), gather and scatter (nccl-tests' sends and receives).
-- scripts/bench/ccl_bench.lua measures the five all-to-all collectives in depth (graphs, every call
-- checked, stress); this one is the short table for the collectives it does not have, root 0.
--   mpirun -np 2 iris-lua scripts/bench/ccl_rooted_bench.lua [--min SIZE] [--max SIZE] [--collective LIST]
--                                                            [--variant LIST] [--repeats N] [--csv FILE]
-- SIZE: bytes of the whole buffer (reduce, broadcast, send_recv: the tensor; gather: the root's output;
-- scatter: the root's input). Time: a batch of back-to-back calls timed with iris.bench, per call, the
-- median over `repeats` batches, the slowest rank's. "x ref": the reference's time over ours (above 1:
-- ours is faster). After the timed batches every output is checked.
local ffi = require "ffi"
local C = ffi.C

local ORDER = { "reduce", "broadcast", "send_recv", "gather", "scatter" }
local VARIANTS = {
  reduce = { "auto", "ll", "one_shot", "two_shot" },
  broadcast = { "auto", "ll", "push", "scatter_all_gather", "copy_engine" },
  send_recv = { "auto", "pull" },
  gather = { "auto", "ll", "pull" },
  scatter = { "auto", "ll", "pull" },
}
local BATCH_SECONDS = 0.002

local options = iris.options(arg, {
  name = "ccl_rooted_bench",
  about = "ctx.ccl's reduce, broadcast, send/recv, gather and scatter against NCCL, RCCL or MPI in the same run",
  options = {
    { "min", "4KiB", "smallest buffer", type = "bytes" },
    { "max", "1MiB", "largest buffer; sizes double from --min", type = "bytes", gpu = "16MiB" },
    { "collective", table.concat(ORDER, ","), "collectives to measure", type = "list", choices = ORDER },
    { "variant", "auto", "variants to measure (each where the collective has it)", type = "list" },
    { "repeats", 3, "batches timed per measurement; the median is reported", type = "integer", min = 1 },
  },
})
if not options then return end

local MiB = 1024 * 1024
-- A heap whose one-way staging holds the messages measured (a sixteenth of it, 4 slots per rank).
local staging_heap = 16 * iris.world_size() * 4 * (2 * math.min(options.max, 4 * MiB) + 256)
local ctx = iris.init { heap_size = math.max(3 * options.max + 64 * MiB, staging_heap) }
local W, me = ctx.world_size, ctx.rank
local dtype, element = "float32", 4
local library = require "iris.reference"
local reference = library.open(ctx)
local staging = require("iris.ccl").staging(ctx)
local slowest = function(v) return require("iris.broadcast").slowest(v, "ccl_rooted_bench: the slowest rank") end
local function human(bytes) return ffi.string(C.iris_human_bytes(bytes)) end

-- Milliseconds per call of fn: batches of back-to-back calls lasting about BATCH_SECONDS (rank 0's
-- estimate, so that every rank makes the same calls), the median batch.
local function time_per_call(fn)
  fn()
  local probe = iris.bench(fn, { warmup = 1, iters = 3 }).median_ms
  local calls = ctx:broadcast(math.max(1, math.min(256, math.floor(BATCH_SECONDS * 1e3 / math.max(probe, 1e-4)))), 0)
  local batch = iris.bench(function() for _ = 1, calls do fn() end end, { warmup = 1, iters = options.repeats })
  return slowest(batch.median_ms / calls)
end

-- inp, out and the reference's count for `count` elements of the whole buffer (a multiple of W).
local function buffers(collective, count)
  local per = count / W
  if collective == "gather" then return ctx:full(per, me + 1, dtype), ctx:zeros(count, dtype), per end
  if collective == "scatter" then return ctx:arange(count, dtype), ctx:zeros(per, dtype), per end
  if collective == "broadcast" then
    local t = ctx:zeros(count, dtype)
    return t, t, count
  end
  return ctx:full(count, me + 1, dtype), ctx:zeros(count, dtype), count
end

local function ours(collective, variant, inp, out)
  local opts = variant ~= "auto" and { variant = variant } or nil
  if collective == "broadcast" then return function() ctx.ccl.broadcast(out, 0, opts) end end
  if collective == "send_recv" then
    -- a pulled send waits for its recv: odd ranks receive first, so the ring never waits on itself
    local to, from, first = (me + 1) % W, (me - 1) % W, variant ~= "pull" or me % 2 == 0 or W == 1
    return function()
      if first then ctx.ccl.send(inp, to, opts) end
      ctx.ccl.recv(out, from)
      if not first then ctx.ccl.send(inp, to, opts) end
    end
  end
  local fn = ctx.ccl[collective]
  return function() fn(out, inp, 0, opts) end
end

-- After the timed calls: three elements of every output that the call writes.
local function check(collective, variant, inp, out, count)
  local per = count / W
  local n = out:numel()
  for _, k in ipairs { 1, math.floor(n / 2) + 1, n } do
    local want
    if collective == "reduce" then
      want = me == 0 and W * (W + 1) / 2 or nil
    elseif collective == "broadcast" then
      want = 7
    elseif collective == "send_recv" then
      want = (me - 1) % W + 1
    elseif collective == "gather" then
      want = me == 0 and math.floor((k - 1) / per) + 1 or nil
    else -- scatter: chunk `me` of root's arange
      want = me * per + k - 1
    end
    local got = out:get(k)
    if want and got ~= want then
      error(("%s %s %s: element %d is %s, expected %s (rank %d)"):format(collective, variant, human(count * element), k,
        tostring(got), tostring(want), me))
    end
  end
end

-- The one-way variants take what fits a slot of the staging (docs/collectives.md, "One way").
local function fits(collective, variant, count)
  if variant == "pull" or (variant ~= "ll" and not (collective == "send_recv" and variant == "auto")) then return true end
  local whole = collective ~= "gather" and collective ~= "scatter"
  return staging ~= nil and math.ceil((whole and count or count / W) * element / 8) <= staging.words
end

local rows = {}
for _, collective in ipairs(options.collective) do
  local bytes = options.min
  while bytes <= options.max do
    local count = math.floor(bytes / element / W) * W
    if count > 0 then
      local inp, out, ref_count = buffers(collective, count)
      local ref_us
      if reference.handle then
        local rc = collective == "reduce" and "reduce" or collective
        local ok, result = pcall(time_per_call, function()
          library.run(reference, rc, inp, out, ref_count, dtype, "sum", 0)
        end)
        if ok then ref_us = result * 1e3 elseif me == 0 then ctx:warning("%s %s: %s", reference.name, collective, result) end
      end
      for _, variant in ipairs(options.variant) do
        local has = false
        for _, v in ipairs(VARIANTS[collective]) do has = has or v == variant end
        if has and fits(collective, variant, count) and not (variant == "scatter_all_gather" and count % W ~= 0) then
          if collective == "broadcast" then out:fill(me == 0 and 7 or 0) end
          local us = time_per_call(ours(collective, variant, inp, out)) * 1e3
          check(collective, variant, inp, out, count)
          rows[#rows + 1] = { collective = collective, bytes = count * element, variant = variant, us = us, ref_us = ref_us }
        end
      end
      if inp ~= out then inp:free() end
      out:free()
    end
    bytes = bytes * 2
  end
end

library.close(reference)
if me == 0 then
  local ref = reference.name ~= "none" and reference.name or "ref"
  print(("ccl_rooted_bench on %d rank%s, backend %s (%s), float32, root 0; reference: %s%s"):format(W,
    W == 1 and "" or "s", ctx.backend, ctx.device_name, reference.name, reference.why and (" (" .. reference.why .. ")") or ""))
  print(("%-10s %10s  %-19s %10s %10s %8s"):format("collective", "size", "variant", "ours us", ref .. " us", "x " .. ref))
  for _, r in ipairs(rows) do
    print(("%-10s %10s  %-19s %10.2f %10s %8s"):format(r.collective, human(r.bytes), r.variant, r.us,
      r.ref_us and ("%.2f"):format(r.ref_us) or "n/a", r.ref_us and ("%.2f"):format(r.ref_us / r.us) or "n/a"))
  end
end
iris.options.write(options, rows, { columns = { "collective", "bytes", "variant", "us", "ref_us" } })
