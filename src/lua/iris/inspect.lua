-- What the REPL shows of values and offers at Tab (docs/repl.md): a table printed as its contents
-- (`iris` lists its functions and fields instead of "table: 0x..."), and the completions of a word
-- such as "ctx:ze" or "iris.as" from the globals, the fields and the methods reachable from them.
local M = {}

local LINE = 100       -- characters per line of a listing
local MAX_ENTRIES = 60 -- entries shown of one table

local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
  "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }

local function is_identifier(key)
  return type(key) == "string" and key:match("^[%a_][%w_]*$") ~= nil
end

-- The entries of a table in the order they read best: the array part, then the names sorted.
local function ordered_keys(t)
  local keys, n = {}, 0
  while rawget(t, n + 1) ~= nil do
    n = n + 1
    keys[n] = n
  end
  local names = {}
  for k in pairs(t) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then names[#names + 1] = k end
  end
  table.sort(names, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then return a < b end
    return type(a) < type(b)
  end)
  for _, k in ipairs(names) do keys[#keys + 1] = k end
  return keys, n
end

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__tostring") ~= nil
end

-- One value inside a listing: strings quoted, nested tables by their size, functions as <function>.
local function short(v)
  local kind = type(v)
  if kind == "string" then return ("%q"):format(#v > 40 and v:sub(1, 40) .. "..." or v) end
  if kind == "table" and not has_tostring(v) then
    local count = 0
    for _ in pairs(v) do count = count + 1 end
    return count == 0 and "{}" or ("{...%d}"):format(count)
  end
  if kind == "function" then return "<function>" end
  if kind == "number" or kind == "boolean" or kind == "nil" or has_tostring(v) then
    return (tostring(v):gsub("\n.*", " ..."))
  end
  return "<" .. kind .. ">"
end

-- A table as its contents: `{ 1, 2, 3 }`, `{ cdiv = <function>, version = "0.1.0", ... }`, wrapped
-- at LINE characters, at most MAX_ENTRIES entries (the rest counted).
function M.show(t)
  local keys, array = ordered_keys(t)
  if #keys == 0 then return "{}" end
  local entries = {}
  for i, k in ipairs(keys) do
    if i > MAX_ENTRIES then
      entries[#entries + 1] = ("... (%d more)"):format(#keys - MAX_ENTRIES)
      break
    end
    local v = rawget(t, k)
    if i <= array then
      entries[#entries + 1] = short(v)
    else
      local name = is_identifier(k) and k or ("[" .. short(k) .. "]")
      entries[#entries + 1] = name .. " = " .. short(v)
    end
  end
  local one_line = "{ " .. table.concat(entries, ", ") .. " }"
  if #one_line <= LINE then return one_line end
  local lines, current = { "{" }, "  "
  for i, entry in ipairs(entries) do
    entry = entry .. (i < #entries and "," or "")
    if #current + #entry + 1 > LINE and current ~= "  " then
      lines[#lines + 1] = current
      current = "  "
    end
    current = current .. (current == "  " and "" or " ") .. entry
  end
  lines[#lines + 1] = current
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n")
end

-- Whether the REPL shows `v` as its contents rather than as tostring does.
function M.shows_contents(v) return type(v) == "table" and not has_tostring(v) end

-- Completions ---------------------------------------------------------------------------------------

-- The value a path of names reaches from `env` ("ctx", "iris.plot"), or nil. Plain indexing, under
-- pcall: an object's __index may raise.
local function resolve(env, path)
  local value = env
  for name in path:gmatch("[^.:]+") do
    if not is_identifier(name) then return nil end
    local ok, next_value = pcall(function() return value[name] end)
    if not ok or next_value == nil then return nil end
    value = next_value
  end
  return value
end

-- The names a value answers to: its own keys, and those of the tables its metatables' __index chain
-- goes through (methods of a class, the state of a tensor and its methods).
local function names_of(value, add)
  local seen = {}
  local function from_table(t, depth)
    if seen[t] or depth > 4 then return end
    seen[t] = true
    for k, v in pairs(t) do
      if is_identifier(k) and k:sub(1, 2) ~= "__" then add(k, v) end
    end
    local mt = getmetatable(t)
    if type(mt) == "table" and type(rawget(mt, "__index")) == "table" then from_table(rawget(mt, "__index"), depth + 1) end
  end
  if type(value) == "table" then from_table(value, 0) end
  local mt = getmetatable(value)
  if type(mt) == "table" and type(rawget(mt, "__index")) == "table" then from_table(rawget(mt, "__index"), 1) end
  -- A tensor: its state's metatable finds the methods with a function; iris.tensor knows them.
  local tensor = package.loaded["iris.tensor"]
  if tensor and tensor.is_tensor(value) then from_table(tensor.Tensor, 1) end
end

-- The words `word` could become: "ctx:ze" -> {"ctx:zeros", "ctx:zeros_like"}; "pri" -> {"print"}.
-- After ':' only functions; names starting with '_' only when the word does.
function M.completions(word, env)
  env = env or _G
  local path, separator, partial = word:match("^(.*)([.:])([%w_]*)$")
  local base = env
  if path then
    base = resolve(env, path)
    if base == nil then return {} end
  else
    partial = word
  end
  local found, seen = {}, {}
  local function add(name, v)
    if seen[name] or name:sub(1, #partial) ~= partial then return end
    if name:sub(1, 1) == "_" and partial:sub(1, 1) ~= "_" then return end
    if separator == ":" and type(v) ~= "function" then return end
    seen[name] = true
    found[#found + 1] = (path and (path .. separator) or "") .. name
  end
  names_of(base, add)
  if not path then
    for _, keyword in ipairs(KEYWORDS) do add(keyword, true) end
  end
  table.sort(found)
  return found
end

return M
