-- What the labs' checkers are made of (labs/NN-name/check.lua; `iris-lua lab check`, docs/labs/README.md).
--
-- A checker defines its lab (H.define) and a `run(check)` that calls the student's functions through
-- `check`: each check is a step run on every rank the way the test runner runs a case (protected,
-- stopped by a timeout, the ranks' results agreed: iris.testing.run_step), so a wrong element, a
-- device fault or a hang is reported once, naming the ranks, with the lab's hint. Inputs come from a
-- secret seed per run (printed, so `--seed` repeats them); timed runs are checked on every rank, every
-- run; the student's time is printed next to the reference's with the threshold for full marks.
local ffi = require "ffi"
local errors = require "iris.errors"
local testing = require "iris.testing"
local json = require "iris.json"
local options = require "iris.options"
local env = require "iris.env"
local is_tensor = require("iris.tensor").is_tensor
local slowest = require("iris.broadcast").slowest
local C = ffi.C

local H = {}

local DEFAULT_TIMEOUT = 120      -- seconds per check (compiling the student's kernels included)
local DEFAULT_WAIT_TIMEOUT = "5" -- IRIS_WAIT_TIMEOUT for the student's waits unless set: hangs fail sooner
local DEFAULT_RUNS = 10          -- timed rounds, each checked
local BATCH_MS = 2               -- a batch of back-to-back calls lasts about this long (or holds one call)
local MAX_BATCH = 1000
local SENTINEL = -7777           -- what outputs hold before each run: a call that writes nothing is caught

H.SENTINEL = SENTINEL

-- Raised to stop the lab after a failed step (already reported).
local Stop = setmetatable({}, { __tostring = function() return "lab check stopped" end })

-- A lab: { number, title, ranks = { min = 1 or 2, try = {2, 4} },
-- calls = { names of the functions the student's table must have }, env = { VAR = default },
-- run = function(check) ... end }.
function H.define(lab)
  for _, field in ipairs { "number", "title", "calls", "run" } do
    assert(lab[field] ~= nil, "a lab definition needs " .. field)
  end
  lab.ranks = lab.ranks or {}
  lab.ranks.min = lab.ranks.min or 1
  lab.ranks.try = lab.ranks.try or { 2, 4 }
  return lab
end

-- "1 float", "1000 floats": a count for the checks' names.
function H.count(n, noun) return ("%d %s%s"):format(n, noun, n == 1 and "" or "s") end

-- "1 or more ranks (try 2 and 4)" / "2 or more ranks (try 2 and 4)"
function H.ranks_text(lab)
  local try = {}
  for i, n in ipairs(lab.ranks.try) do try[i] = tostring(n) end
  return ("%d or more ranks (try %s)"):format(lab.ranks.min, table.concat(try, " and "))
end

---------------------------------------------------------------------------------------------------
-- Seeds

-- A secret seed for this run, the same on every rank (rank 0's, from the kernel's random source).
local function secret_seed(ctx)
  local seed = nil
  if ctx.rank == 0 then
    local source = io.open("/dev/urandom", "rb")
    local bytes = source and source:read(5) or tostring(os.time() + os.clock() * 1e6)
    if source then source:close() end
    seed = 0
    for i = 1, 5 do seed = seed * 256 + (bytes:byte(i) or 0) end
  end
  return ctx:broadcast(seed, 0)
end

-- A seed for one set of inputs, mixed from the run's seed and a tag: exact in a double (< 2^45).
local function mixed(seed, tag)
  local h = seed % 35184372088831
  for i = 1, #tag do h = (h * 251 + tag:byte(i)) % 35184372088831 end
  return h
end

---------------------------------------------------------------------------------------------------
-- The check object a lab's run() receives

local Check = {}
H.Check = Check -- (the harness's tests make checks of their own)
Check.__index = Check

-- Prints a line of the report (rank 0; standard error with --json, where standard output is the JSON).
function Check:say(fmt, ...)
  if self.ctx.rank ~= 0 then return end
  local text = select("#", ...) > 0 and fmt:format(...) or fmt
  self.out:write(text, "\n")
  self.out:flush()
end

-- A seed for the inputs named `tag` (ctx:rand(shape, dtype, check:seed("x")) gives each rank its own
-- numbers; { seed = check:seed("x"), shared = true } the same on every rank).
function Check:seed(tag) return mixed(self.seed_value, tag) end

-- `cpu` on the cpu backend, `gpu` on the others: sizes (the cpu backend runs small, in CI too).
function Check:size(cpu, gpu) return self.ctx.backend == "cpu" and cpu or gpu end

-- Runs `fn` on every rank as one check named `name` and prints its PASS/FAIL line. A failure prints
-- `hint` (what the lab teaches about it) and stops the lab.
function Check:step(name, fn, hint)
  self.count = self.count + 1
  local outcome, lines = testing.run_step(("lab %s check %d"):format(self.lab.id, self.count), name, fn, self.timeout)
  local record = { name = name, status = outcome.status, ms = outcome.ms, failures = json.array() }
  for i, f in ipairs(outcome.failures) do record.failures[i] = { rank = f.rank, message = f.message } end
  self.report.steps[#self.report.steps + 1] = record
  self:say("%s", table.concat(lines, "\n"))
  if outcome.status == "fail" then
    if hint then
      record.hint = hint
      self:say("  hint: %s", (hint:gsub("\n", "\n        ")))
    end
    error(Stop, 0)
  end
end

-- Inputs of an all-reduce: n float32 whole numbers on every rank (so that the sum is exact in any
-- order) and the sum every rank must get, added up on the host from every rank's inputs.
function Check:sum_inputs(n, tag)
  local ctx = self.ctx
  local inp = ctx:randint(-1000, 1000, n, "float32", self:seed(tag))
  local sum = {}
  for i = 1, n do sum[i] = 0 end
  for r = 0, ctx.world_size - 1 do
    local theirs = inp:peer(r):to_table()
    for i = 1, n do sum[i] = sum[i] + theirs[i] end
  end
  local expected = ctx:empty(n)
  expected:copy(sum)
  return inp, expected
end

-- The all-reduce of the backend's reference library (NCCL on cuda, RCCL on hip, MPI on cpu:
-- iris.reference): a subject for Check:time_together ({ name, call }) when it opened, and rows for
-- Check:compare's `others` that say what could not be measured ({ name, why }).
function Check:library_all_reduce(out, inp)
  local library = require "iris.reference"
  if self.library == nil then self.library = library.open(self.ctx) end
  local lib, notes, subject = self.library, {}, nil
  if self.ctx.backend == "cpu" then
    notes[1] = { name = "NCCL", why = "the cpu backend has none (run on a GPU); MPI_Allreduce stands in" }
  end
  local name = lib.name == "none" and (self.ctx.backend == "hip" and "RCCL" or "NCCL") or lib.name
  name = name == "MPI" and "MPI_Allreduce" or name .. " all_reduce"
  if lib.handle then
    subject = { name = name, call = function() library.run(lib, "all_reduce", inp, out, inp:numel(), inp.dtype) end }
  else
    table.insert(notes, 1, { name = name, why = lib.why })
  end
  return subject, notes
end

-- Waits `seconds` on this rank (a consumer launched before its producer is caught if it does not wait).
function Check:pause(seconds)
  local start = C.iris_wall_time()
  while C.iris_wall_time() - start < seconds do end
end

-- Fails the running step unless ctx.<field> exists: what the lab waits for, said plainly.
function Check:need(field, what)
  if self.ctx[field] == nil then
    self.waiting = what
    error(("lab %s waits for %s, which this iris-lua does not have yet; the checks above ran, the timing "
      .. "against it cannot"):format(self.lab.id, what), 0)
  end
end

-- The slowest rank's value of each entry of `values` (a list, the same length on every rank).
function Check:slowest(values)
  return slowest(values, "lab check: every rank's times")
end

-- The value at fraction `q` (0: the least, 0.5: the median, 1: the most) of `list`, interpolated.
local function quantile(list, q)
  local sorted = {}
  for i, v in ipairs(list) do sorted[i] = v end
  table.sort(sorted)
  local at = 1 + q * (#sorted - 1)
  local low = math.floor(at)
  local high = math.min(low + 1, #sorted)
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low)
end
H.quantile = quantile

-- { median, q1, q3 } of a list: a time and its spread (the middle half of the rounds lies in [q1, q3]).
local function spread(list)
  return { median = quantile(list, 0.5), q1 = quantile(list, 0.25), q3 = quantile(list, 0.75), rounds = #list }
end

local function new_timer()
  local slot = ffi.new("iris_timer*[1]")
  errors.check(C.iris_timer_create(slot))
  return ffi.gc(slot[0], C.iris_timer_destroy)
end

-- Times the subjects ({ { name =, call = [, verify = false] [, per = factor] }, ...}; the student's
-- first; `verify = false`: a subject whose result is not checked; `per`: a factor for its time, as 1 / the
-- steps one call makes) the same way, interleaved, on
-- every rank at once (issue 27: the student and the reference were timed differently, one at a time,
-- and a 16 MiB all_reduce read ten times slower than ccl_bench times it):
--   * in each round every subject runs once, the round's first subject a different one each round (so
--     drift, a neighbour's load or a warm cache favours none);
--   * a run: `reset()`, a barrier, a device barrier (every rank's device starts the run together, so the
--     time is not the host barrier's skew), then `batch` calls back to back timed by device events
--     (iris_timer), a barrier, and `verify(label)` on every rank: a wrong result in any run fails;
--   * `batch`: with opts.back_to_back (the calls may follow each other without a barrier, as a
--     collective's may), as many calls as last about BATCH_MS, found in an untimed warm-up round (from
--     the slowest rank's slowest subject, the same on every rank); else 1;
--   * each run's time per call is the slowest rank's.
-- Returns, by name, { median, q1, q3, rounds, batch, times = { per round } } (the same on every rank).
function Check:time_together(subjects, opts)
  local ctx = self.ctx
  local rounds = opts.runs or self.runs
  local timer, ms = new_timer(), ffi.new("double[1]")
  local function run(subject, label, batch)
    if opts.reset then opts.reset() end
    ctx:barrier()
    ctx:device_barrier()
    errors.check(C.iris_timer_start(timer))
    for _ = 1, batch do subject.call() end
    errors.check(C.iris_timer_stop(timer, ms))
    ctx:barrier()
    if opts.verify and subject.verify ~= false then opts.verify(label) end
    return ms[0] / batch * (subject.per or 1)
  end
  -- Two untimed warm-up runs of each subject (the first one pays for loading kernels), checked too; the
  -- second one's time sizes the batches.
  local slowest_warm = 0
  for _, subject in ipairs(subjects) do
    run(subject, subject.name .. ", warm-up run", 1)
    slowest_warm = math.max(slowest_warm, run(subject, subject.name .. ", warm-up run", 1))
  end
  local batch = 1
  if opts.back_to_back then
    slowest_warm = self:slowest({ slowest_warm })[1]
    batch = math.max(1, math.min(MAX_BATCH, math.floor(BATCH_MS / math.max(slowest_warm, 1e-4))))
  end
  local times = {}
  for s = 1, #subjects do times[s] = {} end
  for round = 1, rounds do
    for j = 0, #subjects - 1 do
      local s = (round - 1 + j) % #subjects + 1
      times[s][round] = run(subjects[s], ("%s, timed round %d"):format(subjects[s].name, round), batch)
    end
  end
  local flat = {}
  for s = 1, #subjects do
    for round = 1, rounds do flat[#flat + 1] = times[s][round] end
  end
  flat = self:slowest(flat)
  local results = {}
  for s, subject in ipairs(subjects) do
    local mine = {}
    for round = 1, rounds do mine[round] = flat[(s - 1) * rounds + round] end
    local r = spread(mine)
    r.times, r.batch = mine, batch
    results[subject.name] = r
  end
  return results
end

-- Fails on this rank unless `actual` equals `expected` (a tensor, a table, a number), or is close to it
-- within `tolerance` ({ rtol =, atol = }): the message gives the first element that differs, its index
-- and the value expected there (iris.assert_*). Tensors are compared in bulk first, so that large ones
-- cost little when they match.
function Check:expect(actual, expected, what, tolerance)
  if tolerance then
    if not (is_tensor(expected) and actual:allclose(expected, tolerance.rtol, tolerance.atol)) then
      iris.assert_allclose(actual, expected, { rtol = tolerance.rtol, atol = tolerance.atol, msg = what })
    end
  elseif not (is_tensor(expected) and actual:equal(expected)) then
    iris.assert_equal(actual, expected, what)
  end
end

local function format_ms(ms) return ms and ("%.3f ms"):format(ms) or "-" end

-- "0.123 ms [0.118 - 0.131]": a subject's median and the middle half of its rounds.
local function format_time(r)
  return ("%s  [%.3f - %.3f]"):format(format_ms(r.median), r.q1, r.q3)
end

-- The grade of a ratio's rounds against `threshold`: "full" when even the upper quartile is within it,
-- "slower" when even the lower one is above it, else "noisy" (the spread straddles it: not graded).
function H.grade(ratio, threshold)
  if ratio.q3 <= threshold then return "full" end
  if ratio.q1 > threshold then return "slower" end
  return "noisy"
end

-- Prints the subjects' times with their spread and the grade, and records them for --json.
-- t = { what = "per call, ...", yours = result, yours_name = "yours", reference = { name =, result = },
-- threshold = 1.2, others = { { name =, result = } or { name =, why = }, ... } }, results from
-- Check:time_together. The grade is the student's time over the reference's round by round (the rounds
-- interleave them: each ratio compares runs made side by side), its median and quartiles.
function Check:compare(t)
  local yours, ref = t.yours, t.reference.result
  local rows = { { t.yours_name or "yours", yours }, { t.reference.name .. " (the reference)", ref } }
  for _, other in ipairs(t.others or {}) do rows[#rows + 1] = { other.name, other.result, other.why } end
  local width = 0
  for _, row in ipairs(rows) do width = math.max(width, #row[1]) end
  self:say("time %s: the slowest rank's median over %d rounds, [the middle half of the rounds]%s:", t.what,
    yours.rounds, yours.batch > 1 and (", each run %d calls back to back"):format(yours.batch) or "")
  for _, row in ipairs(rows) do
    self:say("  %-" .. width .. "s  %s", row[1], row[2] and format_time(row[2]) or ("not measured: " .. tostring(row[3])))
  end
  local ratios = {}
  for round, ms in ipairs(yours.times) do ratios[round] = ms / ref.times[round] end
  local ratio = spread(ratios)
  local grade = H.grade(ratio, t.threshold)
  local verdict = grade == "full" and ("full marks (within %gx)"):format(t.threshold)
    or grade == "slower" and ("correct, but slower than that: full marks within %gx"):format(t.threshold)
    or ("not graded: the rounds' ratios straddle %gx, the bound of full marks; run it again on a quieter machine, "
      .. "or with more --runs"):format(t.threshold)
  self:say("speed: yours takes %.2fx the reference's time (%.2fx - %.2fx over the rounds): %s", ratio.median, ratio.q1,
    ratio.q3, verdict)
  local timing = { what = t.what, yours_ms = yours.median, yours_q1_ms = yours.q1, yours_q3_ms = yours.q3,
                   reference = t.reference.name, reference_ms = ref.median, reference_q1_ms = ref.q1,
                   reference_q3_ms = ref.q3, ratio = ratio.median, ratio_q1 = ratio.q1, ratio_q3 = ratio.q3,
                   threshold = t.threshold, rounds = yours.rounds, batch = yours.batch, graded = grade ~= "noisy",
                   full_marks = grade == "noisy" and json.null or grade == "full", others = json.array() }
  for _, other in ipairs(t.others or {}) do
    timing.others[#timing.others + 1] = { name = other.name, ms = other.result and other.result.median or json.null,
      why = other.why }
  end
  self.report.timings[#self.report.timings + 1] = timing
end

-- Prints a table (rank 0) and records it for --json: `columns` = names, `rows` = lists of values
-- (numbers are printed with `format`, default "%.3g").
function Check:table(title, columns, rows, format)
  local cells = { columns }
  for i, row in ipairs(rows) do
    cells[i + 1] = {}
    for j, v in ipairs(row) do
      local whole = type(v) == "number" and v % 1 == 0 and math.abs(v) >= 1
      cells[i + 1][j] = whole and ("%d"):format(v) or type(v) == "number" and (format or "%.3g"):format(v) or tostring(v)
    end
  end
  local widths = {}
  for _, row in ipairs(cells) do
    for j, v in ipairs(row) do widths[j] = math.max(widths[j] or 0, #v) end
  end
  self:say("%s", title)
  for _, row in ipairs(cells) do
    local parts = {}
    for j, v in ipairs(row) do parts[j] = ("%" .. widths[j] .. "s"):format(v) end
    self:say("  %s", table.concat(parts, "  "))
  end
  self.report.tables[#self.report.tables + 1] = { title = title, columns = columns, rows = rows }
end

---------------------------------------------------------------------------------------------------
-- Running a lab

-- Lines of the student's file still holding the lab's fill-in marker, "TODO(lab NN):".
local function todo_lines(path, id)
  local lines, number = {}, 0
  local file = io.open(path, "rb")
  if not file then return lines end
  for line in file:lines() do
    number = number + 1
    if line:find("TODO(lab " .. id .. "):", 1, true) then lines[#lines + 1] = number end
  end
  file:close()
  return lines
end

-- The heap a check asks for: IRIS_HEAP_SIZE when set; else small on the cpu backend (several ranks of
-- several students share /dev/shm) and large where a GPU will be chosen (the labs time larger sizes
-- there: Check:size). iris.init chooses the backend later: iris.options.expects_gpu foresees its choice.
function H.heap_size()
  if env("IRIS_HEAP_SIZE") then return nil end
  return options.expects_gpu() and "1GiB" or "32MiB"
end

local function set_default_env(name, value)
  pcall(ffi.cdef, "int setenv(const char* name, const char* value, int overwrite);") -- (declared once)
  C.setenv(name, value, 0)
end

-- The student's file, loaded as the test runner loads a test file (its own globals; its functions
-- interpreted, so a timeout stops a loop anywhere in them). Returns its table.
local function load_student(path, lab)
  local chunk, problem = loadfile(path)
  if chunk == nil then error(problem, 0) end
  local env = setmetatable({ arg = { [0] = path } }, { __index = _G })
  env._G = env
  setfenv(chunk, env)
  jit.off(chunk, true)
  local functions = chunk()
  if type(functions) ~= "table" then
    error(("%s returns %s: it must end with `return lab`, the table of functions the skeleton returns"):format(path,
      functions == nil and "nothing" or ("a " .. type(functions))), 0)
  end
  for _, name in ipairs(lab.calls) do
    if type(functions[name]) ~= "function" then
      error(("%s's table has no function %s (lab %s calls %s; the skeleton shows its arguments)"):format(path, name,
        lab.id, table.concat(lab.calls, ", ")), 0)
    end
  end
  return functions
end

-- Runs `lab` against the student's file on every rank. options: json, seed, timeout, runs.
-- Returns the exit code: 0 every check passed, 1 one failed, 2 a usage error.
function H.run(lab, path, options)
  local world = C.iris_world_size()
  local function usage(fmt, ...)
    if C.iris_rank() == 0 then io.stderr:write("iris-lua lab check: ", fmt:format(...), "\n") end
    return errors.exit_code_of("usage")
  end
  if world < lab.ranks.min then
    return usage("lab %s needs at least %d ranks (%s): run it as\n  mpirun -np %d iris-lua lab check %s %s",
      lab.id, lab.ranks.min, lab.needs_ranks_because or "it talks between ranks", lab.ranks.try[1], lab.id, path)
  end
  local readable = io.open(path, "rb")
  if not readable then return usage("cannot open %s", path) end
  readable:close()

  set_default_env("IRIS_WAIT_TIMEOUT", DEFAULT_WAIT_TIMEOUT)
  for name, value in pairs(lab.env or {}) do set_default_env(name, value) end
  local ctx = iris.init { heap_size = H.heap_size() }
  local check = setmetatable({
    ctx = ctx, lab = lab, count = 0, timeout = options.timeout or DEFAULT_TIMEOUT, runs = options.runs or DEFAULT_RUNS,
    out = options.json and io.stderr or io.stdout, seed_value = options.seed or secret_seed(ctx),
    report = { lab = lab.id, title = lab.title, file = path, ranks = ctx.world_size, backend = ctx.backend,
               steps = json.array(), timings = json.array(), tables = json.array() },
  }, Check)
  check.report.seed = check.seed_value
  check:say("lab %s: %s: checking %s on %d rank%s (%s backend); inputs from seed %d", lab.id, lab.title, path,
    ctx.world_size, ctx.world_size == 1 and "" or "s", ctx.backend, check.seed_value)
  if ctx.backend == "cpu" and lab.env and lab.env.IRIS_CPU_MEMORY_MODEL then
    local model = env("IRIS_CPU_MEMORY_MODEL")
    check:say("memory model: %s (IRIS_CPU_MEMORY_MODEL%s)", model, model == "weak"
      and ": stores to other ranks arrive late and out of order unless a release publishes them, as on a GPU"
      or "; a missing release will likely go unnoticed: unset it for this lab")
  end

  local ok, problem = pcall(function()
    check:step("load " .. path, function() check.student = load_student(path, lab) end,
      "the file must run as a Lua script and return its table of functions, as the skeleton does")
    lab.run(check, check.student)
  end)
  if not ok and problem ~= Stop then error(problem, 0) end -- the checker's own failure: the host ends the job

  local todo = todo_lines(path, lab.id)
  check.report.passed = ok
  check.report.todo_lines = json.array(todo)
  if not ok and #todo > 0 then
    local where = {}
    for i, line in ipairs(todo) do where[i] = tostring(line) end
    check:say("your file still has %d place%s marked TODO(lab %s) (line%s %s): fill %s in; %s.md says what goes there",
      #todo, #todo == 1 and "" or "s", lab.id, #todo == 1 and "" or "s", table.concat(where, ", "),
      #todo == 1 and "it" or "them", lab.slug)
  end
  check.report.waiting_for = check.waiting
  if ok then
    check:say("lab %s: PASSED (%d checks)", lab.id, check.count)
  elseif check.waiting then
    check:say("lab %s: NOT READY: it waits for %s", lab.id, check.waiting)
  else
    -- The command as it was run, ranks included: the same inputs on other ranks are other inputs.
    local launcher = ctx.world_size > 1 and ("mpirun -np %d "):format(ctx.world_size) or ""
    check:say("lab %s: FAILED; the same inputs again: %siris-lua lab check %s %s --seed %d", lab.id, launcher, lab.id,
      path, check.seed_value)
  end
  if options.json and ctx.rank == 0 then
    io.stdout:write(json.encode(check.report), "\n")
    io.stdout:flush()
  end
  return ok and 0 or errors.exit_code_of("assertion")
end

return H
