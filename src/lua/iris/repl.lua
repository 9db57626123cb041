-- The interactive REPL across all ranks (docs/repl.md).
--
-- Rank 0 reads a complete chunk (more lines until it compiles, as `lua` does) or a meta-command, sends
-- it to every rank, every rank runs it with its output captured, and rank 0 prints every rank's output
-- in rank order, each line after "[r] " when there are several ranks. Policy lives here; the mechanism
-- (line editing, mpirun's terminal, output capture, Ctrl-C) is C++ behind src/capi/capi_repl.h;
-- commands and results travel on the session lane of iris.exchange.
local ffi = require "ffi"
local jit = require "jit"
require "iris.cdef"
local errors = require "iris.errors"
local between_ranks = require "iris.exchange"
local inspect = require "iris.inspect"
local C = ffi.C

local M = {}

local PROMPT, CONTINUATION = "> ", ">> "
-- What chunks are named in messages: "stdin", or the transcript's file when rank 0 replays one
-- (serve_rank0 sets it; every command carries it to the other ranks).
local chunk_name = "=stdin"
local INPUT_PIPE, INPUT_EDITING = 0, 2 -- iris_repl_open: 0 a pipe, 1 prompts, 2 line editing

local HELP = [[
Lua chunks run on every rank; rank 0 prints each rank's output in rank order.
An expression's value is printed (no '=' needed); an incomplete chunk continues on '>>' lines.
  :help             this text
  :ranks            every rank: host, process id, device (once iris.init() ran)
  :on R <code>      run <code> on rank R only
  :load <file.lua>  run a file on every rank
  :time <code>      run <code> and print each rank's wall time (and device time once a runtime can time)
  :trace on [FILE]  trace every rank from now on (iris.trace.start); :trace off [FILE] writes it
  :quit             leave (also Ctrl-D, or os.exit([code]))
help(x) prints the reference of x (a function, an object or a name: help(ctx), help("t:reshape"));
=expr prints expr; Tab completes names.
Ctrl-C stops the running chunk on every rank; at the prompt it drops the line.]]

-- Chunks ------------------------------------------------------------------------------------------

-- The parser reached the end of the text before the chunk was complete.
local function is_incomplete(message)
  return message ~= nil and message:sub(-7) == "'<eof>'"
end

-- What `text` is as a chunk: "expression" (it compiles after "return "), "statements", "incomplete"
-- (more lines could complete it) or "error" with the syntax error.
function M.classify(text)
  if loadstring("return " .. text, chunk_name) then return "expression" end
  local compiled, message = loadstring(text, chunk_name)
  if compiled then return "statements" end
  if is_incomplete(message) then return "incomplete" end
  local _, as_expression = loadstring("return " .. text, chunk_name)
  if is_incomplete(as_expression) then return "incomplete" end -- "{" or "f(1," go on
  return "error", message
end

-- "[r] " before every line of `text` (nothing with one rank); the text ends with a newline.
function M.prefix_lines(text, prefix)
  if text == "" then return "" end
  if text:sub(-1) ~= "\n" then text = text .. "\n" end
  if prefix == "" then return text end
  return prefix .. (text:sub(1, -2):gsub("\n", "\n" .. prefix)) .. "\n"
end

-- Running a command on this rank ------------------------------------------------------------------

-- os.exit in a chunk ends the whole session (every rank, cleanly) instead of this process alone.
local exit_request_mt = {}
local function request_exit(code)
  if code == nil or code == true then code = 0 elseif code == false then code = 1 end
  error(setmetatable({ exit_code = math.floor(tonumber(code) or 1) }, exit_request_mt), 0)
end

local function error_text(value)
  if type(value) == "string" then return value end
  local mt = getmetatable(value)
  if mt and mt.__tostring then return tostring(value) end
  return ("(error object is a %s value)"):format(type(value))
end

local function on_chunk_error(value)
  C.iris_repl_stop_running()
  if getmetatable(value) == exit_request_mt then return value end
  -- The chunk's frames: the REPL's own (and iris's) are left out.
  local traceback = errors.traceback(value, 2) -- not a tail call: that would drop a level
  if traceback == "" then return error_text(value) end
  return error_text(value) .. "\n" .. traceback
end

-- An expression's values pass through select(1, ...): with plain "return f()" a failing f() would be
-- a tail call, and its error would lose the chunk's line ("stdin:1:"). The closing parenthesis goes on
-- the last line unless a comment ends it there.
local function expression_chunk(text)
  -- The newlines a transcript's chunk starts with (its line in the file) stay in front.
  local lines, code = text:match("^(\n*)(.*)$")
  local same_line = lines .. "return select(1, " .. code .. ")"
  if loadstring(same_line, chunk_name) then return same_line end
  return lines .. "return select(1, " .. code .. "\n)"
end

-- Values as the REPL prints them: tables (a module such as `iris`) as their contents, the rest as
-- tostring gives them.
local function write_values(n, values)
  if n == 0 then return end
  local texts = {}
  for i = 1, n do
    local v = values[i]
    texts[i] = inspect.shows_contents(v) and inspect.show(v) or tostring(v)
  end
  io.stdout:write(table.concat(texts, "\t"), "\n")
end

-- Runs `fn` as this rank's chunk. Returns "ok", "error" with the message and traceback, or "exit"
-- with the exit code. The values it returns are printed inside the protected call, so a failing
-- __tostring is the chunk's error; Ctrl-C can interrupt only inside it (begin_running .. stop_running).
local function run_protected(fn)
  local ok, failure = xpcall(function()
    C.iris_repl_begin_running()
    local values = { n = 0 }
    local function keep(...) values = { n = select("#", ...), ... } end
    local unnamed = { fn } -- called as unnamed[1], its traceback line reads "in main chunk" as in lua
    keep(unnamed[1]())
    write_values(values.n, values)
    C.iris_repl_stop_running()
  end, on_chunk_error)
  C.iris_repl_stop_running() -- also after an error inside the error handler
  if ok then return "ok" end
  if getmetatable(failure) == exit_request_mt then return "exit", failure.exit_code end
  if type(failure) ~= "string" then failure = error_text(failure) end
  return "error", failure
end

local function describe_this_rank()
  local device = "none yet (iris.init() has not run)"
  if C.iris_initialized() == 1 then
    device = ("%s device %d (%s)"):format(ffi.string(C.iris_backend_name()), C.iris_device_ordinal(),
      ffi.string(C.iris_device_name()))
  end
  return ("rank %d of %d: host %s, pid %d, device %s\n"):format(C.iris_rank(), C.iris_world_size(),
    ffi.string(C.iris_repl_host_name()), tonumber(C.iris_repl_pid()), device)
end

-- The device time of a chunk (iris_timer, as iris.bench's), or why there is none.
local function start_device_timer()
  local out = ffi.new("iris_timer*[1]")
  if C.iris_timer_create(out) ~= 0 then return nil, ffi.string(C.iris_last_error()) end
  local timer = ffi.gc(out[0], C.iris_timer_destroy)
  if C.iris_timer_start(timer) ~= 0 then return nil, ffi.string(C.iris_last_error()) end
  return timer
end

local function stop_device_timer(timer)
  local ms = ffi.new("double[1]")
  if C.iris_timer_stop(timer, ms) == 0 then return ("%.3f ms"):format(ms[0]) end
  return "not available (" .. ffi.string(C.iris_last_error()) .. ")"
end

local function run_code(command, record)
  local fn, message
  if command.kind == "load" then
    fn, message = loadfile(command.payload)
  else
    fn, message = loadstring(command.payload, command.name)
  end
  if not fn then
    record.status, record.report = "error", message
    return
  end
  -- Code compiled by the JIT never looks at Ctrl-C (LuaJIT FAQ): the chunk and the functions it
  -- defines run in the interpreter, so Ctrl-C stops a loop typed at the prompt. What they call from
  -- modules keeps the JIT.
  jit.off(fn, true)
  local timed, timer, device_reason = command.time, nil, nil
  local started = 0
  if timed then
    timer, device_reason = start_device_timer()
    started = C.iris_wall_time()
  end
  local status, detail
  if command.kind == "load" then
    status, detail = run_protected(function() fn() end) -- a file's return values stay quiet
  else
    status, detail = run_protected(fn)
  end
  if timed then
    local wall_ms = (C.iris_wall_time() - started) * 1000
    local device = timer and stop_device_timer(timer) or ("not available (" .. device_reason .. ")")
    record.timing = ("time: wall %.3f ms, device %s\n"):format(wall_ms, device)
  end
  record.status = status
  if status == "error" then record.report = detail end
  if status == "exit" then record.exit_code = detail end
end

-- Runs one command on this rank and returns its record: status ("ok", "error", "exit", "skip"), what
-- the rank printed (`out`, `err`) and what the REPL adds (timing on out, the error on err).
local function perform(command, world_size)
  local record = { status = "ok", out = "", err = "", exit_code = 0 }
  if command.target >= 0 and command.target ~= C.iris_rank() then
    record.status = "skip"
    return record
  end
  -- With one rank the output goes straight out; with several it is kept for rank 0's ordered print.
  local capture = world_size > 1
  if capture then errors.check(C.iris_repl_begin_capture()) end
  if command.kind == "ranks" then
    io.stdout:write(describe_this_rank())
  else
    -- Code on one rank must not wait in a collective for ranks that skip it: that was a silent hang.
    if command.target >= 0 then
      C.iris_comm_run_alone((":on %d runs this code on rank %d alone"):format(command.target, command.target))
    end
    local ok, failure = pcall(run_code, command, record)
    C.iris_comm_run_alone(nil)
    if not ok then record.status, record.report = "error", error_text(failure) end
  end
  io.stdout:flush()
  io.stderr:flush()
  if capture then
    local out, out_n = ffi.new("const char*[1]"), ffi.new("size_t[1]")
    local err, err_n = ffi.new("const char*[1]"), ffi.new("size_t[1]")
    errors.check(C.iris_repl_end_capture(out, out_n, err, err_n))
    record.out, record.err = ffi.string(out[0], out_n[0]), ffi.string(err[0], err_n[0])
  end
  if record.timing then record.out = record.out .. record.timing end
  if record.report then
    if record.err ~= "" and record.err:sub(-1) ~= "\n" then record.err = record.err .. "\n" end
    record.err = record.err .. record.report .. "\n"
  end
  return record
end

-- Messages between ranks ---------------------------------------------------------------------------

-- "kind sequence target flags\nchunk name\npayload"; flags: "t" (time it) or "-".
local function encode_command(command, sequence)
  return ("%s %d %d %s\n%s\n%s"):format(command.kind, sequence, command.target or -1, command.time and "t" or "-",
    (chunk_name:gsub("\n", "?")), command.payload or "")
end

local function decode_command(text)
  local kind, sequence, target, flags, name, payload = text:match("^(%a+) (%d+) (%-?%d+) (%S+)\n([^\n]*)\n(.*)$")
  return { kind = kind, sequence = tonumber(sequence), target = tonumber(target), time = flags == "t",
    name = name, payload = payload }
end

local function encode_record(record)
  return ("%s %d %d %d\n"):format(record.status, record.exit_code, #record.out, #record.err) .. record.out .. record.err
end

local function decode_record(text)
  local status, exit_code, out_n, err_n, start = text:match("^(%a+) (%-?%d+) (%d+) (%d+)\n()")
  out_n, err_n = tonumber(out_n), tonumber(err_n)
  return { status = status, exit_code = tonumber(exit_code), out = text:sub(start, start + out_n - 1),
    err = text:sub(start + out_n, start + out_n + err_n - 1) }
end

-- Rank 0 passes the command (the others nil); every rank gets it back. (An exchange on the session lane
-- is named for what a rank waits for in it: a hang report says "waiting for <name>".)
local function share_command(text)
  return between_ranks.exchange(between_ranks.SESSION, between_ranks.FROM_ROOT, 0, "rank 0's next REPL command",
    text or "")[0]
end

-- Every rank's record on rank 0 (index = rank, from 0); nil elsewhere.
-- How the results of a command are waited for (M.run sets it from rank 0's input): read from a pipe,
-- as the job's collectives are (a hang report, then the end of the job: nobody is there to press Ctrl-C
-- when one rank never finishes a command); at a terminal, for as long as it takes.
local results_lane = between_ranks.SESSION

local function gather_records(mine, world_size)
  local all = between_ranks.exchange(results_lane, between_ranks.TO_ROOT, 0,
    "every rank to finish the REPL command", encode_record(mine))
  if C.iris_rank() ~= 0 then return nil end
  local records = { [0] = mine }
  for r = 1, world_size - 1 do records[r] = decode_record(all[r]) end
  return records
end

-- Runs a shared command on this rank and brings every rank's record to rank 0.
local function execute(command, world_size)
  C.iris_repl_begin_command(command.sequence)
  local record
  if command.kind == "quit" or command.kind == "renew" then
    record = { status = "ok", out = "", err = "", exit_code = 0 }
    if command.kind == "renew" then errors.check(C.iris_comm_renew()) end
  else
    record = perform(command, world_size)
  end
  local records = gather_records(record, world_size)
  return records, C.iris_repl_end_command()
end

-- :trace on [FILE] and :trace off [FILE], run on every rank.
function M.trace_command(mode, file)
  if file == "" then file = nil end
  if mode == "on" then
    iris.trace.start(file)
    if iris.rank() == 0 then
      print(file and ("tracing every rank; :trace off writes " .. file) or "tracing every rank; :trace off FILE writes it")
    end
    return
  end
  local s = iris.trace.stop(file)
  print(("trace: %d host events, %d launches, %d device events%s; clock within %.1f us of rank 0's%s"):format(
    s.host_events, s.launches, s.device_events, s.device_overflow > 0 and (" (%d more did not fit)"):format(s.device_overflow)
      or "", s.clock_error_us, iris.rank() == 0 and ("; written to " .. s.file) or ""))
end

-- Rank 0: reading commands ----------------------------------------------------------------------------

local Reader = {}
Reader.__index = Reader

-- A line, nil at the end of the input, false after Ctrl-C at the prompt.
function Reader:line(prompt)
  local status, line, n = ffi.new("int[1]"), ffi.new("const char*[1]"), ffi.new("size_t[1]")
  errors.check(C.iris_repl_read_line(self.prompts and prompt or "", status, line, n))
  if status[0] == 1 then return nil end
  if status[0] == 2 then return false end
  self.lines_read = self.lines_read + 1
  local text = ffi.string(line[0], n[0])
  if self.prompts and text:find("%S") then errors.check(C.iris_repl_remember(text)) end
  return text
end
-- Tab calls back into Lua from inside the read, which LuaJIT allows only for a call the interpreter
-- made (not one compiled into a trace).
jit.off(Reader.line)

-- A transcript's chunk keeps its place in the file: as many newlines in front as lines before it, so
-- that messages name the transcript's line ("lab.repl:6:"). Typed chunks start at line 1, as in luajit.
function Reader:numbered(text)
  if self.prompts then return text end
  return ("\n"):rep(self.lines_read - 1) .. text
end

-- Reads lines after `text` until the chunk is complete; returns a command.
function Reader:code_command(text, command)
  while true do
    local kind, message = M.classify(text)
    if kind == "expression" or kind == "statements" then
      command.kind = "run"
      command.payload = kind == "expression" and expression_chunk(text) or text
      return command
    elseif kind == "error" then
      return { kind = "error", message = message }
    end
    local more = self:line(CONTINUATION)
    if more == nil then -- the input ended inside the chunk
      local _, unfinished = loadstring(text, chunk_name)
      return { kind = "error", message = unfinished }
    end
    if more == false then return { kind = "nothing" } end
    text = text .. "\n" .. more
  end
end

function Reader:meta_command(name, rest)
  local world_size = C.iris_world_size()
  if name == "help" then
    return { kind = "print", message = HELP }
  elseif name == "quit" or name == "q" or name == "exit" then
    return { kind = "quit" }
  elseif name == "ranks" then
    return { kind = "ranks" }
  elseif name == "load" then
    if rest == "" then return { kind = "error", message = ":load needs a file: :load file.lua" } end
    return { kind = "load", payload = rest }
  elseif name == "time" then
    if rest == "" then return { kind = "error", message = ":time needs code: :time f(x)" } end
    return self:code_command(self:numbered(rest), { time = true })
  elseif name == "trace" then
    local mode, file = rest:match("^(%a+)%s*(.-)$")
    if mode ~= "on" and mode ~= "off" then
      return { kind = "error", message = ":trace needs on or off: :trace on trace.json, then :trace off" }
    end
    return self:code_command(self:numbered(("require('iris.repl').trace_command(%q, %q)"):format(mode, file)), {})
  elseif name == "on" then
    local rank, code = rest:match("^(%d+)%s+(.*)$")
    if not rank or not code:find("%S") then
      return { kind = "error", message = ":on needs a rank and code: :on 1 print(x)" }
    end
    rank = tonumber(rank)
    if rank >= world_size then
      return { kind = "error", message = ("there is no rank %d: the ranks are 0 to %d"):format(rank, world_size - 1) }
    end
    return self:code_command(self:numbered(code), { target = rank })
  end
  return { kind = "error", message = (":%s is not a command (:help lists them)"):format(name) }
end

-- The next command: nil at the end of the input.
function Reader:command()
  local line = self:line(PROMPT)
  if line == nil then return nil end
  if line == false or not line:find("%S") then return { kind = "nothing" } end
  local name, rest = line:match("^%s*:(%a*)%s*(.-)%s*$")
  if name then return self:meta_command(name, rest) end
  if line:sub(1, 1) == "=" then line = "return " .. line:sub(2) end -- luajit's "=expr"
  return self:code_command(self:numbered(line), {})
end

-- Rank 0: printing --------------------------------------------------------------------------------

local function print_records(records, world_size)
  for r = 0, world_size - 1 do
    local prefix = world_size > 1 and ("[%d] "):format(r) or ""
    local record = records[r]
    io.stdout:write(M.prefix_lines(record.out, prefix))
    io.stdout:flush()
    io.stderr:write(M.prefix_lines(record.err, prefix))
    io.stderr:flush()
  end
end

-- After Ctrl-C: did it stop a rank inside the iris module (a collective, perhaps)? Then the ranks'
-- collectives may be out of step: one rank left a collective the others still have to join.
local function interrupted_inside_iris(records, world_size)
  for r = 0, world_size - 1 do
    local err = records[r].err
    if records[r].status == "error" and err:find("interrupted", 1, true)
      and (err:find("interrupted in ", 1, true) or err:find("\n%s*iris/[%w_/]+%.lua:")) then
      return true
    end
  end
  return false
end

local OUT_OF_STEP_NOTE = "note: Ctrl-C stopped a rank inside iris, perhaps in a collective; the ranks' "
  .. "collectives continue afresh, but a tensor being allocated then may be lost to the heap"

-- The session -------------------------------------------------------------------------------------

-- The name a replayed transcript's chunks carry: its path; "stdin" for a pipe or a terminal.
local function input_chunk_name()
  local path = ffi.string(C.iris_repl_input_name())
  return path == "" and "=stdin" or ("@" .. path) -- "@": a long path keeps its end (the file name) in messages
end

-- Tab on rank 0: the words the one before the cursor could become (iris.inspect), from rank 0's
-- globals. The returned text stays referenced until the next call, as the C side reads it.
local completion_text = ""
local function complete(word)
  local ok, words = pcall(inspect.completions, ffi.string(word))
  completion_text = ok and table.concat(words, "\n") or ""
  return completion_text
end

local function serve_rank0(input, world_size)
  local reader = setmetatable({ prompts = input ~= INPUT_PIPE, lines_read = 0 }, Reader)
  chunk_name = input == INPUT_PIPE and input_chunk_name() or "=stdin"
  if input ~= INPUT_PIPE then
    io.stdout:write(("iris-lua %s on %d rank%s: :help for commands, Ctrl-D or :quit to leave\n"):format(
      ffi.string(C.iris_version()), world_size, world_size > 1 and "s" or ""))
  end
  local failed, sequence = false, 0
  -- Every rank leaves with the same exit code.
  local function quit(exit_code)
    sequence = sequence + 1
    local command = { kind = "quit", payload = tostring(exit_code) }
    execute(decode_command(share_command(encode_command(command, sequence))), world_size)
    return exit_code
  end
  while true do
    local command = reader:command()
    if command == nil or command.kind == "quit" then
      -- A replayed transcript reports a failed chunk; an interactive session ends with 0.
      return quit((input == INPUT_PIPE and failed) and 1 or 0)
    end
    if command.kind == "error" then
      io.stderr:write(command.message, "\n")
      failed = true
    elseif command.kind == "print" then
      io.stdout:write(command.message, "\n")
    elseif command.kind ~= "nothing" then
      sequence = sequence + 1
      local shared = decode_command(share_command(encode_command(command, sequence)))
      local records, presses = execute(shared, world_size)
      if presses > 0 and input ~= INPUT_PIPE then io.stdout:write("\n") end -- after the echoed ^C
      print_records(records, world_size)
      if presses > 0 then
        -- Some rank may have left a collective the others never joined (iris's or the user's own
        -- through the FFI): every rank moves to fresh communicators together, so the next collective
        -- pairs up again.
        sequence = sequence + 1
        execute(decode_command(share_command(encode_command({ kind = "renew" }, sequence))), world_size)
        if interrupted_inside_iris(records, world_size) then io.stderr:write(OUT_OF_STEP_NOTE, "\n") end
      end
      for r = 0, world_size - 1 do
        if records[r].status == "error" then failed = true end
      end
      for r = 0, world_size - 1 do
        if records[r].status == "exit" then return quit(records[r].exit_code) end
      end
    end
  end
end

local function serve_other_rank(world_size)
  while true do
    local command = decode_command(share_command(nil))
    execute(command, world_size)
    if command.kind == "quit" then return tonumber(command.payload) end
  end
end

-- Runs the REPL on every rank until :quit, Ctrl-D or the end of the input; returns the exit code.
-- `mode` is what the command line saw on this rank's standard input ("terminal" or "pipe"); under
-- mpirun rank 0 looks for mpirun's terminal itself.
function M.run(mode)
  local input = ffi.new("int[1]")
  errors.check(C.iris_repl_open(mode == "terminal" and 1 or 0, input))
  if rawget(_G, "help") == nil then _G.help = iris.help end -- the reference at the prompt
  local completer = nil
  if C.iris_rank() == 0 and input[0] == INPUT_EDITING then
    completer = ffi.cast("iris_repl_completer", complete)
    errors.check(C.iris_repl_set_completer(completer))
  end
  local world_size = C.iris_world_size()
  local input_of_rank0 = between_ranks.exchange(between_ranks.SESSION, between_ranks.FROM_ROOT, 0,
    "the REPL's input (rank 0)", tostring(input[0]))[0]
  results_lane = tonumber(input_of_rank0) == INPUT_PIPE and between_ranks.SESSION_WATCHED or between_ranks.SESSION
  local exit = os.exit
  os.exit = request_exit
  local ok, result = pcall(function()
    if C.iris_rank() == 0 then return serve_rank0(input[0], world_size) end
    return serve_other_rank(world_size)
  end)
  os.exit = exit
  if completer then
    C.iris_repl_set_completer(nil)
    completer:free()
  end
  C.iris_repl_close()
  if not ok then error(result, 0) end
  return result
end

return M
