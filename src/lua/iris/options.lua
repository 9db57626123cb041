-- iris.options: a script's command line, declared (docs/lua-api.md, "iris.options").
--
--   local opts = iris.options(arg, {
--     name = "my_bench", about = "what it measures, in one line",
--     options = {
--       { "size", "64MiB", "bytes per buffer", type = "bytes", gpu = "1GiB" },
--       { "iters", 10, "timed runs", type = "integer", min = 1 },
--       { "dtype", "float32", "element type", choices = { "float32", "float64" } },
--       { "validate", true, "check the results", type = "boolean" },     -- --validate, --no-validate
--     },
--     positional = { ... },  -- the same form, for words without "--", in order
--   })
--   if not opts then return end -- --help was printed
--   ...
--   iris.options.write(opts, rows) -- the results into --csv FILE and --json FILE, when given (rank 0)
--
-- Every rank reads the same command line; a mistake is a usage error (exit code 2) that rank 0
-- reports without a traceback while the other ranks wait for the job to end. Options every script
-- gets are the entries of iris.options.common (--csv, --json): one entry adds one to every script.
local ffi = require "ffi"
local errors = require "iris.errors"
local json = require "iris.json"
local C = ffi.C

local M = {}

-- Options every script has: { name, default, help, type = ... }, as a script declares its own.
M.common = {
  { "csv", nil, "also write the results as CSV to FILE (rank 0)", type = "file" },
  { "json", nil, "also write the results, the options and the run's setting as JSON to FILE (rank 0)", type = "file" },
}

-- The keys an option's declaration may have, and a spec's (for misspelled declarations; the
-- reference's coverage test reads them too).
M._option_keys = { "type", "gpu", "min", "max", "choices", "arg", "bare" }
M._spec_keys = { "name", "about", "usage", "options", "positional" }

local TYPES = { string = "TEXT", integer = "N", number = "X", bytes = "BYTES", boolean = "", file = "FILE",
  plot = "FILE", choice = "NAME", list = "A,B,..." }

local function script_name() return ((arg and arg[0]) or "script.lua"):match("[^/]*$") end

-- A bad command line: rank 0 raises it (kind usage: exit code 2, no traceback, no position: the
-- command line is the mistake); the other ranks wait in a host collective for the job's end instead of
-- printing it again. Should rank 0 go on after all (a pcall), that collective fails and they raise it
-- too: no hang either way.
function M.usage_error(fmt, ...)
  local message = ("%s: %s"):format(script_name(), select("#", ...) > 0 and fmt:format(...) or fmt)
  if C.iris_rank() ~= 0 then C.iris_announce(script_name() .. ": a usage error, reported by rank 0", 0, nil) end
  errors.raise_plain("usage", "%s", message)
end

local function option_error(fmt, ...) M.usage_error("%s (--help lists the options)", fmt:format(...)) end

-- Whether defaults for GPUs apply, before iris.init (which may need the sizes they imply): the backend
-- IRIS_BACKEND names, else a GPU when a GPU driver is loaded, as iris.init's auto choice would find.
function M.expects_gpu()
  local backend = require("iris.env")("IRIS_BACKEND")
  if backend and backend ~= "auto" then return backend ~= "cpu" end
  for _, path in ipairs { "/proc/driver/nvidia/version", "/sys/class/kfd/kfd/topology" } do
    local file = io.open(path, "r")
    if file then
      file:close()
      return true
    end
  end
  return false
end

-- The declarations of a spec, checked: { name, default, help, gpu, type, ... } with the type inferred
-- from the default when not given.
local function declarations(list, what)
  local out = {}
  for i, entry in ipairs(list or {}) do
    if type(entry) ~= "table" or type(entry[1]) ~= "string" then
      errors.raise("invalid_argument", "iris.options: %s[%d] must be { name, default, help, type = ... }", what, i)
    end
    for key in pairs(entry) do
      if type(key) ~= "number" then errors.check_keys({ [key] = true }, M._option_keys, "iris.options: " .. entry[1]) end
    end
    local kind = entry.type or (entry.choices and "choice") or type(entry[2])
    if kind == "nil" then kind = "string" end
    if not TYPES[kind] then
      errors.raise("invalid_argument", "iris.options: option '%s' has type '%s' (types: string, integer, number, "
        .. "bytes, boolean, file, plot, choice, list)", entry[1], tostring(kind))
    end
    out[#out + 1] = { name = entry[1], default = entry[2], help = entry[3] or "", gpu = entry.gpu, type = kind,
      min = entry.min, max = entry.max, choices = entry.choices, arg = entry.arg, bare = entry.bare }
  end
  return out
end

-- Choices given as a list or as name -> description: the names, sorted when they came as a map.
local function choice_names(choices)
  if #choices > 0 then return choices end
  local names = {}
  for name in pairs(choices) do names[#names + 1] = name end
  table.sort(names)
  return names
end

local function byte_count(text, flag)
  local out = ffi.new("uint64_t[1]")
  if C.iris_parse_byte_size(text, flag, out) ~= 0 then option_error("%s", ffi.string(C.iris_last_error())) end
  return tonumber(out[0])
end

-- The value of option `o` from its text on the command line (or its default's text).
local function convert(o, text, flag)
  if o.type == "integer" or o.type == "number" then
    local value = tonumber(text)
    local whole = o.type == "integer"
    if not value or (whole and value % 1 ~= 0) or (o.min and value < o.min) or (o.max and value > o.max) then
      local range = o.max and ("from %s to %s"):format(o.min or "-inf", o.max) or (o.min and (">= %s"):format(o.min) or "")
      option_error("%s takes a %s %s, got '%s'", flag, whole and "whole number" or "number", range, tostring(text))
    end
    return value
  elseif o.type == "bytes" then
    return type(text) == "number" and text or byte_count(text, flag)
  elseif o.type == "choice" then
    local names = choice_names(o.choices)
    for _, name in ipairs(names) do
      if name == text then return text end
    end
    option_error("%s '%s' is not one of %s", flag, tostring(text), table.concat(names, ", "))
  elseif (o.type == "file" or o.type == "plot") and text == "" then
    option_error("%s needs a file name", flag)
  elseif o.type == "plot" then -- a picture iris.plot can write, known before anything is measured
    local ok, why = require("iris.plot").can_save(text)
    if not ok then option_error("%s %s: %s", flag, text, why) end
  elseif o.type == "list" then -- comma-separated words, each one of `choices` when there are any
    if type(text) == "table" then return text end
    local items = {}
    for item in tostring(text):gmatch("[^,]+") do
      if o.choices then convert({ type = "choice", choices = o.choices }, item, flag) end
      items[#items + 1] = item
    end
    if #items == 0 then option_error("%s needs at least one name, got '%s'", flag, tostring(text)) end
    return items
  end
  return text
end

local function print_help(spec, named, positional, gpu)
  local lines = { spec.about and ("%s: %s"):format(spec.name or script_name(), spec.about) or (spec.name or script_name()) }
  local words = {}
  for _, o in ipairs(positional) do words[#words + 1] = "[" .. o.name .. "]" end
  lines[#lines + 1] = "usage: " .. (spec.usage or ("iris-lua %s [options]%s"):format((arg and arg[0]) or script_name(),
    #words > 0 and (" " .. table.concat(words, " ")) or ""))
  local function help_line(o, left)
    local text = o.help
    if o.type == "choice" and #o.choices == 0 then
      local parts = {}
      for _, name in ipairs(choice_names(o.choices)) do parts[#parts + 1] = name .. ": " .. o.choices[name] end
      text = (text ~= "" and (text .. "; ") or "") .. table.concat(parts, "; ")
    elseif o.type == "choice" or (o.type == "list" and o.choices and #o.choices > 0) then
      text = (text ~= "" and (text .. ": ") or "") .. table.concat(o.choices, ", ")
    end
    if o.default ~= nil and o.default ~= "" and o.type ~= "boolean" then
      local cpu, on_gpu = tostring(o.default), o.gpu ~= nil and tostring(o.gpu) or nil
      local default = (on_gpu == nil or on_gpu == cpu) and cpu or ("%s on GPUs, %s on cpu"):format(on_gpu, cpu)
      text = ("%s (default: %s)"):format(text, default)
    end
    if o.bare ~= nil then text = ("%s (--%s alone: %s)"):format(text, o.name, tostring(o.bare)) end
    lines[#lines + 1] = ("  %-18s %s"):format(left, text)
  end
  for _, o in ipairs(positional) do help_line(o, o.name) end
  for _, o in ipairs(named) do
    if o.type == "boolean" then
      o.help = ("%s (default: %s)"):format(o.help, o.default and "yes" or "no")
      help_line(o, "--[no-]" .. o.name)
    else
      local placeholder = o.arg or TYPES[o.type]
      help_line(o, ("--%s %s"):format(o.name, o.bare ~= nil and ("[" .. placeholder .. "]") or placeholder))
    end
  end
  lines[#lines + 1] = ("  %-18s %s"):format("--help", "this text")
  lines[#lines + 1] = "Options also take the form --name=value."
  print(table.concat(lines, "\n"))
end

-- iris.options(argv, spec): the values (opts.NAME, plus opts.gpu: whether GPU defaults applied), or
-- nil after --help (printed by rank 0).
function M.parse(argv, spec)
  if type(spec) ~= "table" then
    errors.raise("invalid_argument", "iris.options(argv, spec): spec is a table {name=, about=, options={...}}, got %s",
      type(spec))
  end
  errors.check_keys(spec, M._spec_keys, "iris.options")
  local named = declarations(spec.options, "options")
  for _, o in ipairs(declarations(M.common, "common")) do named[#named + 1] = o end
  local positional = declarations(spec.positional, "positional")
  local gpu = M.expects_gpu()
  local by_name = {}
  for _, o in ipairs(named) do by_name[o.name] = o end
  local given, words, i = {}, {}, 1
  argv = argv or {}
  while argv[i] ~= nil do
    local word = argv[i]
    local name, value = word:match("^%-%-([%w_-]+)=(.*)$")
    name = name or word:match("^%-%-([%w_-]+)$")
    if word == "-h" or name == "help" then
      if C.iris_rank() == 0 then print_help(spec, named, positional, gpu) end
      return nil
    elseif name then
      local o, negated = by_name[name], false
      if not o and name:sub(1, 3) == "no-" and by_name[name:sub(4)] and by_name[name:sub(4)].type == "boolean" then
        o, negated = by_name[name:sub(4)], true
      end
      if not o then
        local known = {}
        for _, option in ipairs(named) do known[#known + 1] = option.name end
        local near = errors.nearest(name, known)
        option_error("unknown option '%s'%s", word, near and (" (did you mean '--" .. near .. "'?)") or "")
      end
      if o.type == "boolean" then
        if value then option_error("%s takes no value", "--" .. name) end
        given[o.name] = { value = not negated }
      else
        local following = argv[i + 1]
        if not value and o.bare ~= nil and (following == nil or (following:sub(1, 1) == "-" and not tonumber(following))) then
          value = o.bare -- given alone: its bare value
        elseif not value then
          i = i + 1
          value = argv[i]
          if value == nil then
            option_error("--%s needs %s", name, (o.type == "file" or o.type == "plot") and "a file name" or "a value")
          end
        end
        given[o.name] = { text = value, flag = "--" .. name }
      end
    elseif word:sub(1, 1) == "-" and word ~= "-" and not tonumber(word) then
      option_error("unknown option '%s'", word)
    else
      words[#words + 1] = word
    end
    i = i + 1
  end
  if #words > #positional then
    option_error("unexpected argument '%s' (%s)", words[#positional + 1],
      #positional == 0 and "this script takes options only" or ("it takes at most %d"):format(#positional))
  end
  local opts = { gpu = gpu }
  for k, o in ipairs(positional) do
    if words[k] ~= nil then given[o.name] = { text = words[k], flag = o.name } end
    named[#named + 1] = o
  end
  for _, o in ipairs(named) do
    local g = given[o.name]
    if g and g.value ~= nil then
      opts[o.name] = g.value
    elseif g then
      opts[o.name] = convert(o, g.text, g.flag)
    else
      local default = o.default
      if gpu and o.gpu ~= nil then default = o.gpu end
      if default ~= nil then opts[o.name] = o.type == "boolean" and default or convert(o, default, "--" .. o.name) end
    end
  end
  opts.name = opts.name or spec.name or script_name():gsub("%.lua$", "")
  return opts
end

setmetatable(M, { __call = function(_, argv, spec) return M.parse(argv, spec) end })

-- Results -----------------------------------------------------------------------------------------------

local function csv_field(v)
  local text = v == nil and "" or tostring(v)
  if text:find('[,"\n\r]') then text = '"' .. text:gsub('"', '""') .. '"' end
  return text
end

-- The columns of `rows`: `columns` when given, else every key, sorted.
local function columns_of(rows, columns)
  if columns then return columns end
  local seen, list = {}, {}
  for _, row in ipairs(rows) do
    for key in pairs(row) do
      if not seen[key] then
        seen[key] = true
        list[#list + 1] = key
      end
    end
  end
  table.sort(list)
  return list
end

local function write_file(path, text, what)
  local file, problem = io.open(path, "w")
  if not file then errors.raise("invalid_argument", "%s: cannot write %s", what, problem) end
  file:write(text)
  file:close()
end

-- The options as the JSON report records them: everything but csv and json; a list as it was written.
local function recorded_options(opts)
  local options = {}
  for key, value in pairs(opts) do
    if type(key) == "string" and key ~= "csv" and key ~= "json" then
      if type(value) ~= "table" then
        options[key] = value
      elseif type(value[1]) == "string" then
        options[key] = table.concat(value, ",") -- a list option, as it was written
      end
    end
  end
  return options
end

local Writer = {}
Writer.__index = Writer

-- iris.options.writer(opts [, {columns = {...}, setting = {...}}]): writes results into opts.csv and
-- opts.json as they are measured (rank 0; nothing on the others, or when neither was asked for), so that
-- a run stopped early leaves what it measured: w:add(row) appends a CSV line (the header before the
-- first) and rewrites the JSON file whole; w:finish() says where the rows went. Without `columns`, the
-- first row's keys, sorted, are the CSV's columns.
function M.writer(opts, extra)
  extra = extra or {}
  errors.check_keys(extra, { "columns", "setting" }, "iris.options.writer")
  local active = C.iris_rank() == 0 and (opts.csv or opts.json) and true or false
  local w = setmetatable({ opts = opts, columns = extra.columns, setting = extra.setting or {}, rows = {},
    active = active }, Writer)
  if active and opts.csv then
    local file, problem = io.open(opts.csv, "w")
    if not file then errors.raise("invalid_argument", "--csv: cannot write %s", problem) end
    w.csv = file
  end
  return w
end

function Writer:add(row)
  self.rows[#self.rows + 1] = row
  if not self.active then return end
  if self.csv then
    if not self.header then
      self.columns = columns_of({ row }, self.columns)
      self.csv:write(table.concat(self.columns, ","), "\n")
      self.header = true
    end
    local fields = {}
    for k, name in ipairs(self.columns) do fields[k] = csv_field(row[name]) end
    self.csv:write(table.concat(fields, ","), "\n")
    self.csv:flush()
  end
  if self.opts.json then
    local document = { script = self.opts.name, options = recorded_options(self.opts), setting = self.setting,
      rows = json.array({ unpack(self.rows) }) }
    write_file(self.opts.json, json.encode(document) .. "\n", "--json")
  end
end

function Writer:finish()
  if not self.active then return end
  local count = #self.rows
  if self.csv then
    if not self.header then self.csv:write(table.concat(columns_of({}, self.columns), ","), "\n") end
    self.csv:close()
    self.csv = nil
    print(("results: %d row%s written to %s"):format(count, count == 1 and "" or "s", self.opts.csv))
  end
  if self.opts.json then
    if count == 0 then
      write_file(self.opts.json, json.encode({ script = self.opts.name, options = recorded_options(self.opts),
        setting = self.setting, rows = json.array() }) .. "\n", "--json")
    end
    print(("results: %d row%s written to %s"):format(count, count == 1 and "" or "s", self.opts.json))
  end
end

-- iris.options.write(opts, rows [, {columns = {...}, setting = {...}}]): the results, a list of flat
-- tables (one per measurement), into opts.csv (a header, then a line per row) and opts.json
-- ({"script", "options", "setting", "rows"}), when the command line asked for them; on rank 0, which
-- says where they went. `setting`: what else describes the run (ranks, backend, device). All at once:
-- iris.options.writer writes them as they come.
function M.write(opts, rows, extra)
  if C.iris_rank() ~= 0 or (not opts.csv and not opts.json) then return end
  extra = extra or {}
  errors.check_keys(extra, { "columns", "setting" }, "iris.options.write")
  local w = M.writer(opts, { columns = columns_of(rows, extra.columns), setting = extra.setting })
  for _, row in ipairs(rows) do w:add(row) end
  w:finish()
end

return M
