-- The Lua API's reference, docs/lua-api.md, compiled into the binary (iris.reference_text): help(x)
-- prints its entry for x, and the coverage test (tests/lua/api_reference.lua) checks that every public
-- name has one. One source: the page is what both read.
--
-- The page's headings name what they describe in backquotes: "### `ctx:zeros(shape [, dtype])`" is the
-- entry of ctx:zeros, "## `ctx`: the context" the section of the context; a heading may name several
-- ("### `ctx:info(fmt, ...)`, `ctx:warning`"). An entry runs to the next heading.
local M = {}

-- "ctx:zeros(shape [, dtype])" -> "ctx:zeros"; "iris-lua test [options]" -> "iris-lua test"; "t[i]" stays.
local function key_of(name)
  return (name:gsub("%s*%(.*$", ""):gsub("%s*{.*$", ""):gsub("%s+%[.*$", ""))
end
M.key_of = key_of

local entries, order -- key -> { title, level, text, section }; keys in page order

local function parse()
  if entries then return end
  entries, order = {}, {}
  local text = require("iris.reference_text")["lua-api.md"]
  local current, section
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local hashes, heading = line:match("^(##+)%s+(.*)$")
    if hashes and #hashes == 2 then section = nil end
    if hashes and heading:find("`", 1, true) then
      current = { title = heading:gsub("`", ""), level = #hashes, lines = {}, section = section }
      if #hashes == 2 then section = current end
      for name in heading:gmatch("`([^`]+)`") do
        local key = key_of(name)
        if entries[key] == nil then
          entries[key] = current
          order[#order + 1] = key
        end
      end
    elseif hashes then
      current = nil
    elseif current then
      current.lines[#current.lines + 1] = line
    end
  end
  for _, key in ipairs(order) do
    local entry = entries[key]
    if not entry.text then entry.text = table.concat(entry.lines, "\n"):gsub("^%s+", ""):gsub("%s+$", "") end
  end
end

-- The entry of `key` ("ctx:zeros"): { title, text }, or nil.
function M.entry(key)
  parse()
  return entries[key]
end

-- Every key, in the page's order.
function M.keys()
  parse()
  return order
end

-- What help shows for an object that is no function: its section, or its entry.
local function object_key(v)
  if v == iris then return "iris" end
  for _, sub in ipairs { "trace", "plot", "options" } do
    if v == iris[sub] then return "iris." .. sub end
  end
  local tensor = package.loaded["iris.tensor"]
  if tensor and tensor.is_tensor(v) then return "t" end
  local mt = getmetatable(v)
  local kernel = package.loaded["iris.kernel"]
  if kernel and mt == kernel.Kernel then return "k" end
  if kernel and mt == kernel.module_mt then return "mod" end
  local context = package.loaded["iris.context"]
  if context and mt == context.Context then return "ctx" end
  local ctx = context and context.current()
  if ctx and v == ctx.ccl then return "ctx.ccl" end
  if ctx and v == ctx.ops then return "ctx.ops" end
  local progress = package.loaded["iris.progress"]
  if progress and mt == progress.Progress then return "iris.progress" end
  local graph = package.loaded["iris.graph"]
  if graph and mt == graph.Graph then return "g" end
  return nil
end

-- The names a function is reachable by: iris.x, iris.trace.x, ctx:x, ctx.ccl.x, t:x, mod:x, p:x, g:x.
local function function_names()
  local names = {}
  local function add(prefix, t)
    for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and type(v) == "function" and names[v] == nil then
        names[v] = prefix .. k
      end
    end
  end
  add("iris.", iris)
  for _, sub in ipairs { "trace", "plot", "options" } do add("iris." .. sub .. ".", iris[sub]) end
  local loaded = package.loaded
  if loaded["iris.context"] then add("ctx:", loaded["iris.context"].Context) end
  if loaded["iris.tensor"] then add("t:", loaded["iris.tensor"].Tensor) end
  if loaded["iris.kernel"] then add("mod:", loaded["iris.kernel"].Module) end
  if loaded["iris.progress"] then add("p:", loaded["iris.progress"].Progress) end
  if loaded["iris.graph"] then add("g:", loaded["iris.graph"].Graph) end
  local ctx = loaded["iris.context"] and loaded["iris.context"].current()
  if ctx and ctx.ccl then add("ctx.ccl.", ctx.ccl) end
  return names
end

-- The key for `x`: a name given as a string (exactly, or the one entry whose name ends so: "zeros"
-- finds ctx:zeros), a function's name, an object's section. Returns the key, or nil and the keys
-- that came close.
function M.lookup(x)
  parse()
  if type(x) == "function" then x = function_names()[x] or x end
  if type(x) ~= "string" then return object_key(x) end
  if entries[x] then return x end
  local named, containing = {}, {}
  for _, key in ipairs(order) do
    if key:match("[.:]([^.:]+)$") == x then named[#named + 1] = key end
    if key:find(x, 1, true) then containing[#containing + 1] = key end
  end
  local matches = #named > 0 and named or containing
  if #matches == 1 then return matches[1] end
  return nil, matches
end

-- The names an entry holds: a section's (## `ctx`: every entry under it), or a table's (### `iris.trace`:
-- the entries named iris.trace.x). Keys, in the page's order.
function M.members(key)
  parse()
  local entry, names = entries[key], {}
  for _, k in ipairs(order) do
    local other = entries[k]
    local in_section = entry.level == 2 and other.section == entry and other ~= entry
    local prefixed = k ~= key and (k:sub(1, #key + 1) == key .. "." or k:sub(1, #key + 1) == key .. ":")
    if (in_section or prefixed) and names[#names] ~= k then names[#names + 1] = k end
  end
  return names
end

-- `names` joined with ", " in lines of at most `width` characters, each line indented by two spaces.
local function name_lines(names, width)
  local lines, line = {}, ""
  for i, name in ipairs(names) do
    local word = name .. (i < #names and "," or "")
    if line ~= "" and #line + 1 + #word > width then
      lines[#lines + 1] = "  " .. line
      line = word
    else
      line = line == "" and word or (line .. " " .. word)
    end
  end
  if line ~= "" then lines[#lines + 1] = "  " .. line end
  return table.concat(lines, "\n")
end

-- The entry as plain text for a terminal: its title, then its text with the code fences dropped and
-- the code indented; a section or a table of functions then lists the names it holds.
function M.render(key)
  local entry = M.entry(key)
  local out, in_code = { entry.title, "" }, false
  for line in (entry.text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^```") then
      in_code = not in_code
    else
      out[#out + 1] = in_code and ("    " .. line) or line
    end
  end
  local names = M.members(key)
  if #names > 0 then
    out[#out + 1] = ""
    out[#out + 1] = ("%d names here (help(\"name\") prints one):"):format(#names)
    out[#out + 1] = name_lines(names, 96)
  end
  return table.concat(out, "\n")
end

-- What help adds for the object itself: a module's kernels with their parameters, a kernel's own
-- signature.
local function about_object(x)
  local kernel = package.loaded["iris.kernel"]
  local mt = getmetatable(x)
  if not kernel or (mt ~= kernel.module_mt and mt ~= kernel.Kernel) then return nil end
  if mt == kernel.Kernel then return ("this kernel: %s"):format(tostring(x):gsub("^iris kernel ", "")) end
  local ffi = require "ffi"
  local lines = { ("this module (%s): its kernels"):format(rawget(x, "_origin")) }
  for line in ffi.string(ffi.C.iris_program_signatures(rawget(x, "_program"))):gmatch("[^\n]+") do
    lines[#lines + 1] = "  " .. line
  end
  return table.concat(lines, "\n")
end

local HELP = [[
help(x): the reference entry of x (docs/lua-api.md): a function (help(iris.init), help(ctx.zeros)),
an object (help(ctx), help(t), help(mod), help(k)) or a name (help("t:reshape"), help("zeros")).
help("iris"), help("ctx"), help("t") list what each has.]]

-- help(x) (the REPL's global, also iris.help): prints on rank 0, so that every rank running the chunk
-- prints it once in all.
function M.help(x)
  local text
  if x == nil then
    text = HELP
  else
    local key, near = M.lookup(x)
    if key then
      text = M.render(key)
      local about = about_object(x)
      if about then text = text .. "\n\n" .. about end
    elseif near and #near > 0 then
      text = ("%s is in several entries: %s"):format(tostring(x), table.concat(near, ", "))
    else
      text = ("no entry for %s in the reference (docs/lua-api.md); help() says what help takes"):format(
        type(x) == "string" and ("'" .. x .. "'") or ("this " .. type(x)))
    end
  end
  if iris.rank() == 0 then print(text) end
end

return M
