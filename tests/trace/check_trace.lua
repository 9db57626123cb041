-- Checks the trace fixtures/all_reduce_job.lua left (tests/trace/CMakeLists.txt):
--   iris-lua check_trace.lua TRACE.json RANKS
-- The file parses as JSON (strictly: iris.json), holds every rank's host spans (init, allocations,
-- compile, each launch with its kernel, grid and script line, barriers, the broadcast, the user's mark
-- and span) and device spans (each launch's kernel, and the events the kernel recorded), in order: a
-- launch before its kernel, kernels one after another, a kernel's events inside it, and the ranks'
-- clocks aligned (no rank leaves a barrier before every rank entered it). Exits 1 naming what is wrong.
local json = require "iris.json"

local path, ranks = arg[1], tonumber(arg[2])
assert(path and ranks, "usage: iris-lua check_trace.lua TRACE.json RANKS")
local file = assert(io.open(path, "rb"))
local text = file:read("*a")
file:close()
local trace = json.decode(text)

local failures = 0
local function check(ok, fmt, ...)
  if not ok then
    failures = failures + 1
    io.stderr:write("check_trace: ", fmt:format(...), "\n")
  end
  return ok
end

local fixture = arg[0]:gsub("[^/]*$", "") .. "fixtures/all_reduce_job.lua"
local line_of = {}
local n = 0
for line in io.lines(fixture) do
  n = n + 1
  if line:find("mod.one_shot:launch", 1, true) then line_of.launch = n end
  if line:find("ctx:device_barrier()", 1, true) and not line_of.device_barrier then line_of.device_barrier = n end
  if line:find("iris.init", 1, true) and not line_of.init then line_of.init = n end
  if line:find('iris.trace.mark("inputs ready"', 1, true) then line_of.mark = n end
end

check(json.is_array(trace.traceEvents), "traceEvents is not an array")
check(type(trace.metadata) == "table" and json.is_array(trace.metadata.ranks) and #trace.metadata.ranks == ranks,
  "metadata.ranks should list %d ranks", ranks)

-- Events by rank, in file order.
local by_rank = {}
for r = 0, ranks - 1 do by_rank[r] = { spans = {}, named = {}, process = nil } end
for _, e in ipairs(trace.traceEvents) do
  check(type(e.pid) == "number" and by_rank[e.pid] ~= nil, "an event of an unknown rank: %s", json.encode(e))
  local rank = by_rank[e.pid]
  if rank then
    if e.ph == "M" and e.name == "process_name" then rank.process = e.args.name end
    if e.ph ~= "M" then
      check(type(e.ts) == "number" and e.ts >= 0, "an event without a time: %s", json.encode(e))
      rank.spans[#rank.spans + 1] = e
      rank.named[e.name] = rank.named[e.name] or {}
      table.insert(rank.named[e.name], e)
    end
  end
end

-- Whether a span's args name the fixture's line `line` (the path before it is the command line's).
local function at_line(args, line)
  return type(args) == "table" and type(args.line) == "string" and args.line:find("all_reduce_job%.lua:" .. line .. "$") ~= nil
end

local function find(r, name, cat, tid)
  local out = {}
  for _, e in ipairs(by_rank[r].named[name] or {}) do
    if (not cat or e.cat == cat) and (not tid or e.tid == tid) then out[#out + 1] = e end
  end
  return out
end

-- The script's own barriers (allocations that fill wait in barriers of their own).
local function barriers_of(r)
  local out = {}
  for _, b in ipairs(find(r, "barrier", "sync", 0)) do
    if b.args.op == "ctx:barrier()" then out[#out + 1] = b end
  end
  return out
end

local worst_error_us = 0
for r = 0, ranks - 1 do
  local meta = trace.metadata.ranks[r + 1]
  check(meta.rank == r, "metadata.ranks[%d] is rank %s", r + 1, tostring(meta.rank))
  -- The ranks share a node, so their steady clocks are one clock: the measured offset is within its error.
  check(math.abs(meta.host_clock_offset_ns) <= meta.host_clock_offset_error_ns + 1000,
    "rank %d: host clock offset %d ns beyond its error %d ns (one node, one clock)", r, meta.host_clock_offset_ns,
    meta.host_clock_offset_error_ns)
  -- On the cpu backend the device clock is the host's too.
  if meta.backend == "cpu" then
    check(math.abs(meta.device_clock_offset_ns) <= meta.device_clock_pin_error_ns + 1000,
      "rank %d: device clock offset %d ns beyond its error %d ns (the cpu backend's device clock is the host's)", r,
      meta.device_clock_offset_ns, meta.device_clock_pin_error_ns)
  end
  local error_us = (meta.host_clock_offset_error_ns + meta.device_launch_pin_error_ns + meta.device_clock_pin_error_ns) / 1000
  worst_error_us = math.max(worst_error_us, error_us)
  check(meta.launches >= 3, "rank %d: %d launches timed, expected at least 3", r, meta.launches)
  check(meta.device_events == 3 * 4 * (ranks + 1) and meta.device_events_overflow == 0,
    "rank %d: %d device events (%d overflowed), expected %d", r, meta.device_events, meta.device_events_overflow,
    3 * 4 * (ranks + 1))
  check(by_rank[r].process and by_rank[r].process:find("^rank " .. r), "rank %d has no process name", r)

  -- Events of a rank are in time order.
  local last = -math.huge
  for _, e in ipairs(by_rank[r].spans) do
    check(e.ts >= last, "rank %d: %s at %.3f us comes after an event at %.3f us", r, e.name, e.ts, last)
    last = e.ts
  end

  -- Host spans.
  local init = find(r, "iris.init", "init", 0)
  check(#init == 1 and at_line(init[1].args, line_of.init) and init[1].args.backend,
    "rank %d: no iris.init span from line %d naming the backend", r, line_of.init)
  check(#find(r, "allocate", "memory", 0) >= 3, "rank %d: fewer than 3 allocation spans", r)
  for _, a in ipairs(find(r, "allocate", "memory", 0)) do
    check(type(a.args.bytes) == "number" and at_line(a.args, "%d+"),
      "rank %d: an allocation span without its bytes or script line: %s", r, json.encode(a.args))
  end
  check(#find(r, "compile", "compile", 0) >= 1, "rank %d: no compile span", r)
  local launches = find(r, "one_shot", "launch", 0)
  check(#launches == 3, "rank %d: %d launch spans of one_shot, expected 3", r, #launches)
  for _, l in ipairs(launches) do
    check(l.args.grid == "4x1x1" and l.args.block == "64x1x1" and l.args.kernel:find("^one_shot %(")
      and at_line(l.args, line_of.launch),
      "rank %d: a launch span without kernel, grid, block or line %d: %s", r, line_of.launch, json.encode(l.args))
  end
  local barriers = barriers_of(r)
  check(#barriers == 4, "rank %d: %d ctx:barrier() spans, expected 4", r, #barriers)
  local device_barriers = find(r, "device_barrier", "sync", 0)
  check(#device_barriers == 3 and at_line(device_barriers[1].args, line_of.device_barrier),
    "rank %d: expected 3 device_barrier spans from line %d", r, line_of.device_barrier)
  local broadcasts = find(r, "broadcast", "collective", 0)
  check(#broadcasts == 1 and type(broadcasts[1].args.bytes) == "number", "rank %d: no broadcast span with its bytes", r)
  local marks = find(r, "inputs ready", "user", 0)
  check(#marks == 1 and marks[1].ph == "i" and marks[1].args.elements == 4096
    and at_line(marks[1].args, line_of.mark), "rank %d: the user's mark is missing", r)
  local user_spans = find(r, "broadcast check", "user", 0)
  check(#user_spans == 1 and user_spans[1].ph == "X", "rank %d: the user's span is missing", r)
  if #user_spans == 1 and #broadcasts == 1 then
    local u, b = user_spans[1], broadcasts[1]
    check(b.ts >= u.ts and b.ts + b.dur <= u.ts + u.dur + 0.001, "rank %d: the broadcast is not inside the user's span", r)
  end

  -- Device spans: each launch's kernel, after its launch started, one after another.
  local kernels = find(r, "one_shot", "kernel", 1)
  check(#kernels == 3, "rank %d: %d kernel spans of one_shot on the device track, expected 3", r, #kernels)
  for i = 1, math.min(#kernels, #launches) do
    check(kernels[i].ts >= launches[i].ts - error_us, "rank %d: kernel %d starts %.3f us before its launch", r, i,
      launches[i].ts - kernels[i].ts)
    if i > 1 then
      check(kernels[i].ts >= kernels[i - 1].ts + kernels[i - 1].dur - 0.001, "rank %d: kernel %d overlaps kernel %d", r,
        i, i - 1)
    end
  end
  check(#find(r, "iris_device_barrier", "kernel", 1) == 3, "rank %d: the device barrier's kernels are not on the device track", r)

  -- Launch arrows: every start has its end.
  local arrows = {}
  for _, e in ipairs(by_rank[r].spans) do
    if e.ph == "s" or e.ph == "f" then
      arrows[e.id] = arrows[e.id] or {}
      arrows[e.id][e.ph] = e
    end
  end
  local complete = 0
  for _, pair in pairs(arrows) do
    check(pair.s and pair.f and pair.f.ts >= pair.s.ts - error_us, "rank %d: a launch arrow without both ends", r)
    complete = complete + 1
  end
  check(complete >= 6, "rank %d: %d launch arrows, expected one per launch (6)", r, complete)

  -- Events the kernel recorded: per launch, per block, a get from every rank, then a reduce; each on
  -- its block's track, inside its kernel.
  local gets, reduces = find(r, "get", "device"), find(r, "reduce", "device")
  check(#gets == 3 * 4 * ranks and #reduces == 3 * 4, "rank %d: %d get and %d reduce events, expected %d and %d", r,
    #gets, #reduces, 3 * 4 * ranks, 3 * 4)
  local targets = {}
  for _, g in ipairs(gets) do
    targets[g.args.target_rank] = (targets[g.args.target_rank] or 0) + 1
    check(g.tid == 1000 + g.args.block and g.args.bytes == 4096 / 4 * 4 and g.ph == "X",
      "rank %d: a get event on the wrong track or without its bytes: %s", r, json.encode(g))
    local inside = false
    for _, k in ipairs(kernels) do
      inside = inside or (g.ts >= k.ts - error_us and g.ts + g.dur <= k.ts + k.dur + error_us)
    end
    check(inside, "rank %d: a get event at %.3f us is inside none of the kernels", r, g.ts)
  end
  for peer = 0, ranks - 1 do
    check(targets[peer] == 3 * 4, "rank %d: %s get events from rank %d, expected 12", r, tostring(targets[peer]), peer)
  end
end

-- Across ranks: no rank leaves a barrier before every rank entered it, on the aligned clock.
for b = 1, 4 do
  for r = 0, ranks - 1 do
    for q = 0, ranks - 1 do
      local mine, theirs = barriers_of(r)[b], barriers_of(q)[b]
      if mine and theirs then
        check(mine.ts + mine.dur >= theirs.ts - worst_error_us,
          "barrier %d: rank %d left at %.3f us, before rank %d entered at %.3f us", b, r, mine.ts + mine.dur, q, theirs.ts)
      end
    end
  end
end

if failures > 0 then
  io.stderr:write(("check_trace: %d check%s failed in %s\n"):format(failures, failures == 1 and "" or "s", path))
  os.exit(1)
end
print(("check_trace: %s holds %d ranks' host and device spans, in order (worst clock error %.1f us)"):format(path,
  ranks, worst_error_us))
