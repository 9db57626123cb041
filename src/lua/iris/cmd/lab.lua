-- `iris-lua lab list | start NN [dir] | check NN file.lua`: the teaching labs (docs/labs/README.md).
-- The labs' files are compiled into the binary (iris.lab.catalog); checking is iris.lab.harness.
local ffi = require "ffi"
local errors = require "iris.errors"
local catalog = require "iris.lab.catalog"
local harness = require "iris.lab.harness"
local C = ffi.C

local M = {}

-- The options of `lab check`: its usage error lists them, and docs/lua-api.md's entry must name each
-- (tests/lua/api_reference.lua checks it, as it checks iris-lua test's).
M.OPTIONS = { "--json", "--seed", "--runs", "--timeout" }

local USAGE = [[
usage: iris-lua lab list                      the labs, one a line: number, title, ranks
       iris-lua lab start NN [dir]            copy lab NN's skeleton and text into dir (default: NN-name)
       mpirun -np N iris-lua lab check NN file.lua [options]
                                              check your file against lab NN's checker
check options:
  --json             print the report as one JSON object, the last line of standard output (the
                     readable report goes to standard error)
  --seed N           use these inputs again (a failed check prints its seed); default: a new secret seed
  --runs N           timed runs, each of them checked (default 10)
  --timeout SECONDS  stop a check that runs longer, on any rank (default 120)
Exit codes: 0 passed, 1 a check failed, 2 a usage error (an unknown lab, a missing file, too few ranks).
]]

local function say(fmt, ...)
  if C.iris_rank() == 0 then io.stdout:write(fmt:format(...), "\n") end
end

local function usage_error(fmt, ...)
  if C.iris_rank() == 0 then
    io.stderr:write("iris-lua lab: ", fmt:format(...), "\n(iris-lua lab --help describes the commands)\n")
  end
  return errors.exit_code_of("usage")
end

local function find(word)
  local lab = word and catalog.find(word)
  if lab then return lab end
  local ids = {}
  for i, l in ipairs(catalog.all()) do ids[i] = l.id end
  return nil, ("%s: the labs are %s (iris-lua lab list)"):format(word and ("no lab " .. word) or "name a lab",
    table.concat(ids, ", "))
end

local function list()
  for _, lab in ipairs(catalog.all()) do
    local def = catalog.definition(lab)
    say("%s  %-64s %s", lab.id, def.title, harness.ranks_text(def))
  end
  return 0
end

local function write_new(path, text)
  local existing = io.open(path, "rb")
  if existing then
    existing:close()
    return false, path .. " exists already (the lab is started there: pick another directory or remove it)"
  end
  local file, problem = io.open(path, "wb")
  if not file then return false, problem end
  file:write(text)
  file:close()
  return true
end

-- Copies the skeleton and the text into `dir` (rank 0 alone, when run under mpirun).
local function start(word, dir)
  local lab, problem = find(word)
  if not lab then return usage_error("%s", problem) end
  dir = dir or lab.slug
  if C.iris_rank() ~= 0 then return 0 end
  os.execute(("mkdir -p '%s'"):format(dir:gsub("'", "'\\''")))
  local script, text = dir .. "/" .. lab.slug .. ".lua", dir .. "/" .. lab.slug .. ".md"
  for _, pair in ipairs { { script, catalog.skeleton(lab) }, { text, catalog.text(lab) } } do
    local ok, why = write_new(pair[1], pair[2])
    if not ok then return usage_error("cannot start lab %s: %s", lab.id, why) end
  end
  local def = catalog.definition(lab)
  say("lab %s: %s", lab.id, def.title)
  say("  %s   the text: goal, background, the device calls, exercises, questions", text)
  say("  %s  your file: fill in the places marked TODO(lab %s)", script, lab.id)
  say("check it (%s):\n  mpirun -np %d iris-lua lab check %s %s", harness.ranks_text(def), def.ranks.try[1], lab.id,
    script)
  return 0
end

local function check(args)
  local options, positional = {}, {}
  local i = 1
  while i <= #args do
    local name, inline = args[i]:match("^(%-%-[%w-]+)=(.*)$")
    name = name or args[i]
    local function number(what, minimum)
      local text = inline
      if text == nil then
        i = i + 1
        text = args[i]
      end
      local value = tonumber(text)
      if value == nil or value < minimum or value % 1 ~= 0 and what ~= "--timeout" then
        error(("%s takes a %s, got '%s'"):format(what, what == "--timeout" and "number of seconds" or "whole number",
          tostring(text)), 0)
      end
      return value
    end
    if name == "--json" then
      options.json = true
    elseif name == "--seed" then
      options.seed = number("--seed", 0)
    elseif name == "--runs" then
      options.runs = number("--runs", 1)
    elseif name == "--timeout" then
      options.timeout = number("--timeout", 0)
    elseif name:sub(1, 2) == "--" then
      error(("unknown option '%s' (lab check takes %s)"):format(name, table.concat(M.OPTIONS, ", ")), 0)
    else
      positional[#positional + 1] = args[i]
    end
    i = i + 1
  end
  if #positional ~= 2 then error("lab check takes a lab and your file: iris-lua lab check NN file.lua", 0) end
  local lab, problem = find(positional[1])
  if not lab then error(problem, 0) end
  return lab, positional[2], options
end

-- The words after `lab`; returns the exit code.
function M.main(command, ...)
  if command == nil or command == "-h" or command == "--help" or command == "help" then
    if C.iris_rank() == 0 then io.stdout:write(USAGE) end
    return command == nil and errors.exit_code_of("usage") or 0
  end
  if command == "list" then return list() end
  if command == "start" then
    if select("#", ...) > 2 then return usage_error("lab start takes a lab and, optionally, a directory") end
    return start(...)
  end
  if command == "check" then
    local ok, lab, path, options = pcall(check, { ... })
    if not ok then return usage_error("%s", lab) end
    return harness.run(catalog.definition(lab), path, options)
  end
  return usage_error("unknown command '%s' (list, start, check)", tostring(command))
end

return M
