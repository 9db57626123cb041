-- iris.test, iris.skip and the `iris-lua test` runner (docs/lua-testing.md).
--
-- Every rank runs every case. After each case the ranks exchange their results (a host collective,
-- iris.exchange): a case fails if it failed on any rank, and rank 0 prints one line per
-- case with the failing ranks' messages and tracebacks, then `N passed, N failed, N skipped`.
-- A case that runs longer than the timeout is interrupted the way Ctrl-C interrupts a script, so the
-- report says where it was; the ranks waiting for it are waiting in the exchange and carry on.
local ffi = require "ffi"
local errors = require "iris.errors"
local between_ranks = require "iris.exchange"
local C = ffi.C

local concat = table.concat

local M = {}

local DEFAULT_TIMEOUT = 60
-- How long a timed-out case may take to stop before its process ends the job (it is then stuck where
-- an interrupt cannot reach it).
local STUCK_GRACE = 5

local USAGE = [[
usage: iris-lua test [options] [files or dirs...]
  files or dirs      test files; a directory means every *.lua file under it that declares cases
                     (recursive, sorted; a file there without iris.test cases, such as a module the
                     tests require, is loaded but not a test); a file named here without cases is
                     one case
  --filter PATTERN   run only the cases whose "file: name" contains PATTERN, as plain text or as a
                     Lua pattern (may be repeated: a case runs if any filter selects it)
  --exclude PATTERN  leave out the files and cases whose path or "file: name" contains PATTERN (plain
                     text or a Lua pattern; may be repeated; wins over --filter)
  --list             print the cases that would run, one "file: name" a line, and run none
  --fail-fast        stop after the first case that fails
  --repeat N         run each case N times in a row (default 1), to catch a case that fails sometimes
  --junit FILE       also write the results as JUnit XML to FILE (rank 0)
  --tap FILE         also write the results as TAP (version 13) to FILE (rank 0)
  --no-capture       let the cases' standard output through as it comes (by default each rank's is
                     kept and shown, with its rank, when the case fails)
  --timeout SECONDS  stop a case (or a file's top-level code) that runs longer, on any rank, and
                     report where it was (default 60; 0 for none)
  -h, --help         print this help
A run in which no case matched fails (exit 1): a filter or path with a typo does not pass.
]]

-- The options `iris-lua test` takes, for the reference's coverage check (docs/lua-api.md).
M.OPTIONS = { "--filter", "--exclude", "--list", "--fail-fast", "--repeat", "--junit", "--tap", "--no-capture",
  "--timeout", "--help" }

-- What is running on this rank: nil (a plain script), the file being loaded by the runner
-- ({ phase = "loading", cases = {...} }) or a case ({ phase = "case", label = ... }).
local running = nil

-- iris.skip raises one of these; it is not an error.
local Skip = {}
Skip.__tostring = function(skip) return "skipped: " .. skip.reason end

local function rank() return C.iris_rank() end
local function world_size() return C.iris_world_size() end

local function seconds_text(s) return ("%g s"):format(s) end

---------------------------------------------------------------------------------------------------
-- Running one case on this rank

-- What the timeout of the running case raises (without a position: see on_error).
local timed_out_text = nil
-- The function of the running case: its traceback ends there.
local case_function = nil

-- The error handler of a case: keeps a skip as it is, turns an error into its message, kind and
-- traceback.
-- The frames of the case (iris's own left out: the runner's, and those the error was raised in),
-- indented for the report.
local function on_error(e)
  if getmetatable(e) == Skip then return e end
  local message = e
  local stopped = e == timed_out_text or e == "interrupted!"
  if type(e) ~= "string" then
    local has_tostring = getmetatable(e) ~= nil and getmetatable(e).__tostring ~= nil
    message = has_tostring and tostring(e) or ("(error object is a %s value)"):format(type(e))
  elseif stopped then
    -- The timeout (or Ctrl-C) strikes wherever the case is, possibly inside iris: it is reported at
    -- the user's line.
    message = errors.where() .. e
  end
  local traceback = errors.traceback(e, 2, stopped, case_function):gsub("\n\t", "\n  ")
  return { message = message, kind = errors.kind(message), divergence = errors.divergence(message),
           traceback = traceback, ctrl_c = e == "interrupted!" }
end

-- os.exit inside a case (or a lab's solution, or a test file's top level) would end the process with
-- the case's own exit code and no summary, which reads as a pass: while the case runs it is an error at
-- its line naming the case, and the case fails.
local function exit_refused_in(label)
  return function(code)
    errors.raise("invalid_argument", "os.exit(%s) inside '%s': a test ends by returning (or by an error), not by "
      .. "ending the process", code == nil and "" or tostring(code), label)
  end
end

-- Runs fn under xpcall and disarms the timeout before anything else can run.
local function guarded(fn, armed, label)
  case_function = fn
  local exit = os.exit
  os.exit = exit_refused_in(label)
  local ok, err = xpcall(fn, on_error)
  os.exit = exit
  local fired = armed and C.iris_testing_disarm_timeout() == 1
  return ok, err, fired
end

-- What a case printed on this rank (its standard output, kept while it ran: iris_testing_begin_capture).
local captured_text, captured_bytes = ffi.new("const char*[1]"), ffi.new("size_t[1]")
local function end_capture()
  if C.iris_testing_end_capture(captured_text, captured_bytes) ~= 0 then return "" end
  return ffi.string(captured_text[0], captured_bytes[0])
end

-- Runs `fn` protected, stopped after `timeout` seconds (0: never). Returns this rank's result:
-- { status = "pass" | "fail" | "skip", message, kind, traceback, ms, output }. With `capture`, what it
-- writes to standard output is kept in `output` instead of printed.
local function run_case(fn, timeout, label, capture)
  if capture then errors.check(C.iris_testing_begin_capture()) end
  local armed = timeout > 0
  local timeout_message = "test timed out after " .. seconds_text(timeout)
  timed_out_text = armed and timeout_message or nil
  if armed then
    local stuck = ("iris-lua[rank %d]: %s: %s and was still running %s later, where it cannot be "
      .. "interrupted (a C function, a device wait or JIT-compiled code); ending the job"):format(
        rank(), label, timeout_message, seconds_text(STUCK_GRACE))
    errors.check(C.iris_testing_arm_timeout(timeout, timeout_message, STUCK_GRACE, stuck))
  end
  local started = C.iris_wall_time()
  local exit = os.exit
  local completed, ok, err, fired = pcall(guarded, fn, armed, label)
  os.exit = exit -- also when the timeout struck between the case's end and guarded's own restoring
  if not completed then
    -- The timeout struck after the case ended but before it was disarmed: a timeout all the same.
    ok, err, fired = false, { message = tostring(ok) }, true
    C.iris_testing_disarm_timeout()
  end
  local result = { ms = (C.iris_wall_time() - started) * 1000, output = capture and end_capture() or nil }
  if ok then
    result.status = "pass"
  elseif getmetatable(err) == Skip then
    result.status, result.message = "skip", err.reason
  else
    if type(err) ~= "table" then err = { message = tostring(err) } end -- an error in the error handler
    if not fired and (err.ctrl_c or err.kind == "interrupted") then
      error(("%s (in %s)"):format(err.message, label), 0) -- Ctrl-C stops the run, not just the case
    end
    result.status, result.kind, result.divergence = "fail", err.kind, err.divergence
    result.message, result.traceback = err.message, err.traceback or ""
    if fired and not result.message:find(timeout_message, 1, true) then
      result.message = result.message .. " (" .. timeout_message .. ")"
    end
  end
  return result
end

---------------------------------------------------------------------------------------------------
-- Agreeing across ranks

-- The fields a rank sends after each step (absent ones travel as ""); a collective mismatch's facts
-- (errors.divergence) travel as the last four.
local FIELDS = { "id", "status", "ms", "kind", "message", "traceback", "extra", "output",
                 "in_op", "peer", "peer_op", "where" }

-- Length-prefixed fields, so messages may hold any byte.
local function encode(fields)
  local parts = {}
  for i = 1, #FIELDS do
    local field = tostring(fields[FIELDS[i]] or "")
    parts[i] = #field .. ":" .. field
  end
  return concat(parts)
end

local function decode(text)
  local fields, pos = {}, 1
  for i = 1, #FIELDS do
    local colon = text:find(":", pos, true)
    local length = tonumber(text:sub(pos, colon - 1))
    local field = text:sub(colon + 1, colon + length)
    if field ~= "" then fields[FIELDS[i]] = field end
    pos = colon + length + 1
  end
  return fields
end

-- The name the exchange announces: a rank in a case's collective sees it in its mismatch message.
local EXCHANGE_OP = "iris-lua test: exchange of case results"

-- Every rank's `fields` (index 1 = rank 0).
local function exchange(fields)
  local mine = encode(fields)
  local function all_fields()
    return between_ranks.exchange(between_ranks.JOB, between_ranks.TO_ALL, 0, EXCHANGE_OP, mine)
  end
  -- A rank whose case failed early arrives here while another may still be in a collective of that
  -- case. Both see a mismatch: that rank's case fails with it and comes here; this rank tries again.
  local ok, all = pcall(all_fields)
  while not ok and errors.kind(all) == "divergence" do ok, all = pcall(all_fields) end
  if not ok then error(all, 0) end
  local out = {}
  for r = 0, world_size() - 1 do out[r + 1] = decode(all[r]) end
  return out
end

-- Failures that only follow from another rank's (a collective it left, a timeout while waiting for
-- it) come after the others, so the cause is read first.
local CONSEQUENCES = { divergence = true, peer_finished = true, interrupted = true }

-- A rank whose case failed (a device fault, an error) goes on to the exchange while another rank
-- waits for it in a collective of the case; that rank's collective sees "a mismatch" with the
-- exchange. Its line says what happened instead: it stopped there because the other rank failed.
local function explain_peers_that_left(failures)
  local failed = {} -- rank -> whether its failure is a cause (reported first)
  for _, f in ipairs(failures) do failed[f.rank] = failed[f.rank] or not CONSEQUENCES[f.kind] end
  for _, f in ipairs(failures) do
    local d = f.divergence
    if d and d.peer_op == EXCHANGE_OP and failed[d.peer] ~= nil and d.peer ~= f.rank then
      f.message = ("%sstopped in %s because rank %d failed (%s) and left the case"):format(d.where, d.op, d.peer,
        failed[d.peer] and "see above" or ("see rank " .. d.peer .. "'s line"))
    end
  end
end

-- Combines the ranks' results of the step `id` (every rank must be at the same step):
-- { status, ms, reason (skip), failures = { {rank, message, kind, traceback, divergence}, ... } }.
-- `extra` is compared too: ranks that disagree on it fail the step with `extra_problem(extras)`.
local function agree(id, result, extra, extra_problem)
  local d = result.divergence or {}
  local all = exchange { id = id, status = result.status, ms = result.ms, kind = result.kind,
                         message = result.message, traceback = result.traceback, extra = extra,
                         output = result.output, in_op = d.op, peer = d.peer, peer_op = d.peer_op, where = d.where }
  local outcome = { status = "pass", ms = 0, failures = {}, outputs = {} }
  local extras = {}
  for r, theirs in ipairs(all) do
    extras[r] = theirs.extra or ""
    outcome.ms = math.max(outcome.ms, tonumber(theirs.ms) or 0)
    if theirs.output then outcome.outputs[#outcome.outputs + 1] = { rank = r - 1, text = theirs.output } end
    if theirs.id ~= id then
      theirs = { status = "fail", kind = "divergence", message = ("ranks are out of step: rank %d is at '%s' while "
        .. "rank %d is at '%s'"):format(r - 1, tostring(theirs.id), rank(), id) }
    end
    if theirs.status == "fail" then
      outcome.failures[#outcome.failures + 1] = { rank = r - 1, message = theirs.message or "", kind = theirs.kind,
        traceback = theirs.traceback or "", divergence = theirs.peer and { op = theirs.in_op,
          peer = tonumber(theirs.peer), peer_op = theirs.peer_op, where = theirs.where or "" } }
    elseif theirs.status == "skip" and outcome.reason == nil then
      outcome.reason = theirs.message or "no reason given"
    end
  end
  explain_peers_that_left(outcome.failures)
  for r = 2, #extras do
    if extras[r] ~= extras[1] and #outcome.failures == 0 then
      outcome.failures[1] = { rank = r - 1, message = extra_problem(extras), kind = "divergence", traceback = "" }
    end
  end
  if #outcome.failures > 0 then
    outcome.status = "fail"
  elseif outcome.reason ~= nil then
    outcome.status = "skip"
  end
  return outcome
end

-- A case's own failure, or an after_each hook's when the case passed (a case that failed keeps its
-- message, and says the hook failed too).
local function after_hooks(result, after, timeout, label)
  for _, hook in ipairs(after) do
    local hooked = run_case(hook, timeout, label .. " (after_each)")
    if hooked.status == "fail" then
      if result.status ~= "fail" then
        hooked.ms, hooked.output = result.ms + hooked.ms, result.output
        hooked.message = "after_each: " .. hooked.message
        return hooked
      end
      result.message = ("%s (and after_each failed: %s)"):format(result.message, hooked.message)
    end
  end
  return result
end

-- Runs one case or step on every rank (run_case), then agrees on its outcome across the ranks.
-- `hooks` ({ before = {...}, after = {...} }): the file's before_each and after_each functions; the
-- before ones run inside the case (a failure there fails it), the after ones after it, whatever it did.
local function run_step_outcome(id, label, fn, timeout, capture, hooks)
  running = { phase = "case", label = label }
  local case = fn
  if hooks and #hooks.before > 0 then
    case = function()
      for _, hook in ipairs(hooks.before) do hook() end
      return fn()
    end
  end
  local result = run_case(case, timeout, label, capture)
  if hooks and #hooks.after > 0 then result = after_hooks(result, hooks.after, timeout, label) end
  running = nil
  return agree(id, result)
end

---------------------------------------------------------------------------------------------------
-- Reporting (rank 0)

local function indent(text, prefix)
  return prefix .. text:gsub("\n", "\n" .. prefix)
end

local function ordered_failures(failures)
  local ordered = {}
  for i, f in ipairs(failures) do ordered[i] = f end
  table.sort(ordered, function(x, y)
    local cx, cy = CONSEQUENCES[x.kind] or false, CONSEQUENCES[y.kind] or false
    if cx ~= cy then return cy end
    return x.rank < y.rank
  end)
  return ordered
end

-- "PASS  file.lua: name (12 ms)"; a failure adds each failing rank's message and traceback, once for
-- ranks that failed the same way (the same message but for their rank number, the same traceback).
local function report_lines(label, outcome)
  local ms = ("(%d ms)"):format(math.floor(outcome.ms + 0.5))
  if outcome.status == "pass" then return { "PASS  " .. label .. " " .. ms } end
  if outcome.status == "skip" then return { "SKIP  " .. label .. " (" .. outcome.reason .. ")" } end
  local lines = { "FAIL  " .. label .. " " .. ms }
  local groups, group_of = {}, {}
  for _, f in ipairs(ordered_failures(outcome.failures)) do
    local key = f.message:gsub("rank " .. f.rank .. "%f[%D]", "rank ?") .. "\0" .. f.traceback
    local group = group_of[key]
    if group == nil then
      group = { first = f, others = {} }
      group_of[key] = group
      groups[#groups + 1] = group
    else
      group.others[#group.others + 1] = tostring(f.rank)
    end
  end
  for _, group in ipairs(groups) do
    local f = group.first
    lines[#lines + 1] = indent(("rank %d: %s"):format(f.rank, f.message), "    ")
    if f.traceback ~= "" then lines[#lines + 1] = indent(f.traceback, "      ") end
    if #group.others > 0 then
      lines[#lines + 1] = ("    rank%s %s: the same"):format(#group.others > 1 and "s" or "", concat(group.others, ", "))
    end
  end
  for _, output in ipairs(outcome.outputs or {}) do
    lines[#lines + 1] = ("    output of rank %d:"):format(output.rank)
    lines[#lines + 1] = indent((output.text:gsub("\n$", "")), "      ")
  end
  return lines
end

local function print_report(label, outcome)
  if rank() ~= 0 then return end
  io.stdout:write(concat(report_lines(label, outcome), "\n"), "\n")
  io.stdout:flush()
end

local function xml(text)
  text = tostring(text):gsub("[%z\1-\8\11\12\14-\31]", "?") -- characters XML 1.0 cannot hold
  return (text:gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;" }))
end

-- JUnit XML: a testsuite per file, a testcase per case; assertion failures are <failure>, other
-- errors <error>, skips <skipped>.
local function junit_xml(records)
  local suites, order = {}, {}
  for _, rec in ipairs(records) do
    local suite = suites[rec.file]
    if suite == nil then
      suite = { name = rec.file, records = {}, tests = 0, failures = 0, errors = 0, skipped = 0, time = 0 }
      suites[rec.file] = suite
      order[#order + 1] = suite
    end
    suite.records[#suite.records + 1] = rec
    suite.tests = suite.tests + 1
    suite.time = suite.time + rec.outcome.ms / 1000
    if rec.outcome.status == "skip" then suite.skipped = suite.skipped + 1 end
    if rec.outcome.status == "fail" then
      -- The failure read first (ordered_failures) says what it was: an assertion, or another error.
      rec.cause = ordered_failures(rec.outcome.failures)[1]
      rec.element = rec.cause.kind == "assertion" and "failure" or "error"
      local counter = rec.element == "failure" and "failures" or "errors"
      suite[counter] = suite[counter] + 1
    end
  end
  local total = { tests = 0, failures = 0, errors = 0, skipped = 0, time = 0 }
  for _, suite in ipairs(order) do
    for k in pairs(total) do total[k] = total[k] + suite[k] end
  end
  local out = { '<?xml version="1.0" encoding="UTF-8"?>',
    ('<testsuites name="iris-lua test" tests="%d" failures="%d" errors="%d" skipped="%d" time="%.3f">'):format(
      total.tests, total.failures, total.errors, total.skipped, total.time) }
  for _, suite in ipairs(order) do
    out[#out + 1] = ('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" skipped="%d" time="%.3f">'):format(
      xml(suite.name), suite.tests, suite.failures, suite.errors, suite.skipped, suite.time)
    for _, rec in ipairs(suite.records) do
      local o = rec.outcome
      local head = ('    <testcase classname="%s" name="%s" time="%.3f"'):format(xml(rec.file), xml(rec.name), o.ms / 1000)
      if o.status == "pass" then
        out[#out + 1] = head .. "/>"
      elseif o.status == "skip" then
        out[#out + 1] = head .. ('>\n      <skipped message="%s"/>\n    </testcase>'):format(xml(o.reason))
      else
        local first = rec.cause
        local details = report_lines(rec.file, o)
        for i = 2, #details do details[i] = details[i]:gsub("\n    ", "\n"):sub(5) end
        local text = concat(details, "\n", 2)
        out[#out + 1] = head .. ('>\n      <%s message="%s" type="%s">%s</%s>\n    </testcase>'):format(
          rec.element, xml(("rank %d: %s"):format(first.rank, first.message:match("^[^\n]*"))),
          xml(first.kind or "error"), xml(text), rec.element)
      end
    end
    out[#out + 1] = "  </testsuite>"
  end
  out[#out + 1] = "</testsuites>"
  return concat(out, "\n") .. "\n"
end

-- TAP version 13 (testanything.org): a line per case, "ok N - file: name", "not ok" with the failure's
-- lines as YAML, "# SKIP reason" for a skip.
local function tap_text(records)
  local out = { "TAP version 13", ("1..%d"):format(#records) }
  for i, rec in ipairs(records) do
    local o = rec.outcome
    local description = rec.label:gsub("#", "\\#")
    if o.status == "pass" then
      out[#out + 1] = ("ok %d - %s"):format(i, description)
    elseif o.status == "skip" then
      out[#out + 1] = ("ok %d - %s # SKIP %s"):format(i, description, o.reason)
    else
      out[#out + 1] = ("not ok %d - %s"):format(i, description)
      local details = report_lines(rec.label, o)
      local first = ordered_failures(o.failures)[1]
      out[#out + 1] = "  ---"
      out[#out + 1] = ("  message: %q"):format(("rank %d: %s"):format(first.rank, first.message:match("^[^\n]*")))
      out[#out + 1] = ("  severity: %s"):format(first.kind == "assertion" and "fail" or "error")
      out[#out + 1] = "  data: |"
      for k = 2, #details do out[#out + 1] = indent(details[k], "    ") end
      out[#out + 1] = "  ..."
    end
  end
  return concat(out, "\n") .. "\n"
end

---------------------------------------------------------------------------------------------------
-- The runner

local function parse_arguments(args)
  local options = { filters = {}, excludes = {}, timeout = DEFAULT_TIMEOUT, paths = {}, repeats = 1, capture = true }
  local i = 1
  while i <= #args do
    local arg = args[i]
    local name, inline = arg:match("^(%-%-[%w-]+)=(.*)$")
    name = name or arg
    local function value()
      if inline ~= nil then return inline end
      i = i + 1
      if args[i] == nil then error(("option '%s' needs an argument"):format(name), 0) end
      return args[i]
    end
    if name == "--" then
      for k = i + 1, #args do options.paths[#options.paths + 1] = args[k] end
      break
    elseif name == "-h" or name == "--help" then
      options.help = true
    elseif name == "--filter" then
      options.filters[#options.filters + 1] = value()
    elseif name == "--exclude" then
      options.excludes[#options.excludes + 1] = value()
    elseif name == "--junit" then
      options.junit = value()
    elseif name == "--tap" then
      options.tap = value()
    elseif name == "--no-capture" then
      options.capture = false
    elseif name == "--list" then
      options.list = true
    elseif name == "--fail-fast" then
      options.fail_fast = true
    elseif name == "--repeat" then
      local text = value()
      options.repeats = tonumber(text)
      if options.repeats == nil or options.repeats < 1 or options.repeats % 1 ~= 0 then
        error(("--repeat takes a whole number of runs, 1 or more, got '%s'"):format(text), 0)
      end
    elseif name == "--timeout" then
      local text = value()
      options.timeout = tonumber(text)
      if options.timeout == nil or options.timeout < 0 or options.timeout ~= options.timeout then
        error(("--timeout takes a number of seconds (0 for none), got '%s'"):format(text), 0)
      end
    elseif name:sub(1, 1) == "-" and name ~= "-" then
      error(("unknown option '%s'"):format(name), 0)
    else
      options.paths[#options.paths + 1] = arg
    end
    i = i + 1
  end
  if #options.paths == 0 and not options.help then error("name the test files or directories to run", 0) end
  return options
end

-- The test files under `paths`, and which of them were named themselves (not found in a directory).
local function collect_files(paths)
  local files, named = {}, {}
  local list, bytes = ffi.new("const char*[1]"), ffi.new("size_t[1]")
  for _, path in ipairs(paths) do
    if C.iris_testing_collect_files(path, list, bytes) ~= 0 then error(ffi.string(C.iris_last_error()), 0) end
    for file in ffi.string(list[0], bytes[0]):gmatch("([^%z]+)%z") do
      files[#files + 1] = file
      if file == path then named[file] = true end
    end
  end
  return files, named
end

-- Whether any pattern finds `label`: each plain text or a Lua pattern ("my-case" finds "my-case",
-- "^tensor" finds names that start so).
local function matches_any(patterns, label)
  for _, pattern in ipairs(patterns) do
    if label:find(pattern, 1, true) then return true end
    local ok, found = pcall(string.find, label, pattern)
    if ok and found then return true end
  end
  return false
end

-- Whether the options select `label` (a case's "file: name", or a file's path): a filter finds it (or
-- there is none) and no --exclude does.
local function selected(options, label)
  if matches_any(options.excludes, label) then return false end
  return #options.filters == 0 or matches_any(options.filters, label)
end

-- Runs a file's top-level code in a fresh global table (reads fall back to _G), collecting its
-- cases. The file's own functions run interpreted: a timeout cannot stop a JIT-compiled loop.
local function load_file(path, timeout, capture)
  running = { phase = "loading", cases = {}, hooks = { before = {}, after = {} } }
  local result
  local chunk, problem = loadfile(path)
  if chunk == nil then
    result = { status = "fail", message = problem, traceback = "", ms = 0 }
  else
    local env = setmetatable({ arg = { [0] = path } }, { __index = _G })
    env._G = env
    setfenv(chunk, env)
    jit.off(chunk, true)
    result = run_case(chunk, timeout, path, capture)
  end
  local cases, hooks = running.cases, running.hooks
  running = nil
  return result, cases, hooks
end

-- Runs fn() with `require` finding modules beside the test file first (dir/?.lua, dir/?/init.lua),
-- whatever the current directory: a test's helpers live next to it.
local function beside(path, fn)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local saved = package.path
  package.path = ("%s/?.lua;%s/?/init.lua;%s"):format(dir, dir, saved)
  local ok, result = pcall(fn)
  package.path = saved
  if not ok then error(result, 0) end
  return result
end

local function case_names(cases)
  local names = {}
  for i, case in ipairs(cases) do names[i] = case.name end
  return concat(names, "\n")
end

local function different_cases(extras)
  local parts = {}
  for r, names in ipairs(extras) do
    local count = names == "" and 0 or select(2, names:gsub("\n", "")) + 1
    parts[r] = ("rank %d has %d (%s)"):format(r - 1, count, (names:gsub("\n", ", ")))
  end
  return "ranks declared different test cases: " .. concat(parts, "; ")
    .. " (every rank must make the same iris.test calls in the same order)"
end

-- " (run 2 of 3)" after a case's label with --repeat, nothing without.
local function run_suffix(run, repeats)
  return repeats > 1 and (" (run %d of %d)"):format(run, repeats) or ""
end

-- Loads a file and runs its selected cases, reporting each and adding it to `records` (summary, JUnit).
-- With --list, it only prints the labels of the cases it would run (and lists them in `records`).
-- Returns false once a case failed under --fail-fast: the run stops there.
local function run_file_here(path, options, records, named)
  local function record(name, label, outcome)
    if options.list and outcome.status == "pass" then
      if rank() == 0 then io.stdout:write(label, "\n") end
    else
      print_report(label, outcome)
    end
    records[#records + 1] = { file = path, name = name, label = label, outcome = outcome }
    return not (options.fail_fast and outcome.status == "fail")
  end
  -- A file without cases (a plain script: running it was the test) runs again for each repeat.
  for run = 1, options.repeats do
    local loaded, cases, hooks = load_file(path, options.timeout, options.capture)
    local outcome = agree("load " .. path, loaded, case_names(cases), different_cases)
    -- A file that failed or skipped while loading is reported as a whole, whatever the filter says
    -- about it; so is a plain script named on the command line. A file found in a directory that
    -- declares no case is no test (a module the tests require).
    if outcome.status ~= "pass" or #cases == 0 then
      if outcome.status == "pass" and (not named or not selected(options, path)) then return true end
      local suffix = outcome.status == "pass" and run_suffix(run, options.repeats) or ""
      if not record(path .. suffix, path .. suffix, outcome) then return false end
      if outcome.status ~= "pass" or options.list then return true end
    else
      for index, case in ipairs(cases) do
        local label = path .. ": " .. case.name
        if selected(options, label) then
          for case_run = 1, options.list and 1 or options.repeats do
            local suffix = run_suffix(case_run, options.repeats)
            local outcome = { status = "pass", ms = 0 }
            if not options.list then
              outcome = run_step_outcome(("case %d of %s"):format(index, path), label, case.fn, options.timeout,
                options.capture, hooks)
            end
            if not record(case.name .. suffix, label .. suffix, outcome) then return false end
          end
        end
      end
      return true
    end
  end
  return true
end

local function run_file(path, options, records, named)
  -- A file an --exclude names is not even loaded (every rank sees the same paths and options).
  if matches_any(options.excludes, path) then return true end
  return beside(path, function() return run_file_here(path, options, records, named) end)
end

-- Checks what must hold on every rank before running anything; returns a problem or nil.
local function agree_on_start(files, junit_problem)
  local all = exchange { id = "start", extra = concat(files, "\n"), message = junit_problem }
  for r, theirs in ipairs(all) do
    if theirs.message ~= nil then return theirs.message end
    if theirs.extra ~= all[1].extra then
      return ("rank %d found other test files than rank 0 (each rank must see the same files)"):format(r - 1)
    end
  end
  return nil
end

function M.main(...)
  local ok, options = pcall(parse_arguments, { ... })
  local function usage_error(problem)
    if rank() == 0 then
      io.stderr:write("iris-lua test: ", problem, "\n", USAGE:match("^[^\n]*\n"), "(iris-lua test --help describes the options)\n")
    end
    return errors.exit_code_of("usage")
  end
  if not ok then return usage_error(options) end
  if options.help then
    if rank() == 0 then io.stdout:write(USAGE) end
    return 0
  end
  local found, files, named = pcall(collect_files, options.paths)
  if not found then return usage_error(files) end
  -- The report files (rank 0 writes them): opened now, so that one that cannot be written stops the run
  -- before it starts.
  local reports, report_problem = {}, nil
  for _, report in ipairs { { option = "junit", what = "JUnit" }, { option = "tap", what = "TAP" } } do
    if options[report.option] and rank() == 0 and not report_problem then
      local file, problem = io.open(options[report.option], "w")
      if file == nil then report_problem = ("cannot write the %s file: %s"):format(report.what, problem) end
      reports[report.option] = file
    end
  end
  local problem = agree_on_start(files, report_problem)
  if problem ~= nil then return usage_error(problem) end

  local records = {}
  local started = C.iris_wall_time()
  local stopped_early = false
  for _, path in ipairs(files) do
    local go_on = run_file(path, options, records, named[path])
    collectgarbage() -- on every rank at the same point: tensors of the file go back to the heap together
    if not go_on then
      stopped_early = true
      break
    end
  end
  return M.finish_run(options, records, C.iris_wall_time() - started, stopped_early, reports)
end

-- The end of a run (rank 0 prints): the summary line with the total time, and the exit code. A run in
-- which no case matched fails: a mistyped filter or path must not pass in CI.
function M.finish_run(options, records, seconds, stopped_early, reports)
  local counts = { pass = 0, fail = 0, skip = 0 }
  local matched = 0 -- a file that fails or skips while loading is reported whatever the filters say
  for _, rec in ipairs(records) do
    counts[rec.outcome.status] = counts[rec.outcome.status] + 1
    if #options.filters == 0 or matches_any(options.filters, rec.label) then matched = matched + 1 end
  end
  local nothing = matched == 0
  if rank() == 0 then
    if nothing then
      io.stdout:write(#options.filters > 0 and ("no test case matches --filter " .. concat(options.filters, " or "))
        or "no test case found", " (a run without cases fails)\n")
    end
    if options.list then
      io.stdout:write(("%d case%s\n"):format(counts.pass, counts.pass == 1 and "" or "s"))
    else
      if stopped_early then io.stdout:write("stopped at the first failure (--fail-fast)\n") end
      io.stdout:write(("%d passed, %d failed, %d skipped in %.2f s\n"):format(counts.pass, counts.fail, counts.skip,
        seconds))
    end
    io.stdout:flush()
    if reports.junit then
      reports.junit:write(junit_xml(records))
      reports.junit:close()
    end
    if reports.tap then
      reports.tap:write(tap_text(records))
      reports.tap:close()
    end
  end
  return (counts.fail > 0 or nothing) and errors.exit_code_of("assertion") or 0
end

---------------------------------------------------------------------------------------------------
-- One case for another runner (`iris-lua lab check`: iris.lab.harness)

-- Runs `fn` on every rank as the runner runs a case (protected; stopped after `timeout` seconds, 0:
-- never), and agrees with the other ranks on the outcome ({ status, ms, reason, failures }; every rank
-- must be at the same `id`). Returns the outcome and the lines the runner would print for it.
function M.run_step(id, label, fn, timeout)
  local outcome = run_step_outcome(id, label, fn, timeout)
  return outcome, report_lines(label, outcome)
end

---------------------------------------------------------------------------------------------------
-- iris.test and iris.skip

-- Outside the runner (`iris-lua file.lua`), a case runs where it is declared, as the runner would run
-- it (no timeout: the script is the user's); a failure stops the script.
-- The hooks of a script run that way (iris.before_each before its iris.test calls applies to them).
local direct_hooks = { before = {}, after = {} }

local function run_now(name, fn, file)
  local label = file .. ": " .. name
  local outcome = run_step_outcome("case " .. label, label, fn, 0, false, direct_hooks)
  print_report(label, outcome)
  if outcome.status == "fail" then
    local ranks = {}
    for i, f in ipairs(outcome.failures) do ranks[i] = tostring(f.rank) end
    errors.raise("assertion", "test '%s' failed on rank%s %s (reported above)", name,
      #ranks > 1 and "s" or "", concat(ranks, ", "))
  end
end

-- iris.test(name, fn)
function M.test(name, fn)
  if type(name) ~= "string" or name == "" or type(fn) ~= "function" then
    errors.raise("invalid_argument", "iris.test(name, fn) takes a name and a function, got %s and %s",
      type(name) == "string" and ("%q"):format(name) or type(name), type(fn))
  end
  if running == nil then return run_now(name, fn, debug.getinfo(2, "S").short_src) end
  if running.phase == "case" then
    errors.raise("invalid_argument", "iris.test('%s') inside the test case '%s': declare cases at the top level of the file",
      name, running.label)
  end
  running.cases[#running.cases + 1] = { name = name, fn = fn }
end

-- iris.before_each(fn), iris.after_each(fn): at the top of a test file, functions run on every rank
-- before and after each of its cases (in the order given; after_each also when the case failed).
local function add_hook(which, what, fn)
  if type(fn) ~= "function" then
    errors.raise("invalid_argument", "%s(fn) takes a function, got %s", what, type(fn))
  end
  if running ~= nil and running.phase == "case" then
    errors.raise("invalid_argument", "%s inside the test case '%s': declare hooks at the top level of the file", what,
      running.label)
  end
  local hooks = running and running.hooks or direct_hooks
  hooks[which][#hooks[which] + 1] = fn
end

function M.before_each(fn) add_hook("before", "iris.before_each", fn) end
function M.after_each(fn) add_hook("after", "iris.after_each", fn) end

-- iris.skip([reason])
function M.skip(reason)
  if running == nil then
    errors.raise("invalid_argument", "iris.skip() belongs in a test case (iris.test) or at the top of a file run by `iris-lua test`")
  end
  error(setmetatable({ reason = reason ~= nil and tostring(reason) or "no reason given" }, Skip), 0)
end

return M
