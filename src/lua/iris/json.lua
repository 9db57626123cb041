-- iris.json: JSON text to Lua values and back, strictly (RFC 8259): what iris.plot reads trace files
-- with, and what the tests check them with. decode raises "json: <what> at line L, column C" on
-- anything that is not JSON (a trailing comma, a bare word, a lone surrogate, text after the value).
--
-- Objects become tables with string keys; arrays tables with keys 1..n and a metatable of their own
-- (json.is_array tells them apart, so an empty array stays an array); null becomes json.null.
local M = {}

M.null = setmetatable({}, { __tostring = function() return "json.null" end })

local array_mt = { __json_array = true }

function M.is_array(t) return getmetatable(t) == array_mt end

-- Marks a table as an array for encode, so that an empty one is [] rather than {}.
function M.array(t) return setmetatable(t or {}, array_mt) end

---------------------------------------------------------------------------------------------------
-- Decoding

local byte, sub, find, char = string.byte, string.sub, string.find, string.char

local function fail(text, at, what)
  local line, column = 1, 1
  for i = 1, at - 1 do
    if byte(text, i) == 10 then
      line, column = line + 1, 1
    else
      column = column + 1
    end
  end
  error(("json: %s at line %d, column %d"):format(what, line, column), 0)
end

local function skip_space(text, at)
  local _, last = find(text, "^[ \t\r\n]*", at)
  return last + 1
end

local ESCAPES = { [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f", [110] = "\n", [114] = "\r",
  [116] = "\t" }

local function utf8(code)
  if code < 0x80 then return char(code) end
  if code < 0x800 then return char(0xC0 + math.floor(code / 64), 0x80 + code % 64) end
  if code < 0x10000 then
    return char(0xE0 + math.floor(code / 4096), 0x80 + math.floor(code / 64) % 64, 0x80 + code % 64)
  end
  return char(0xF0 + math.floor(code / 262144), 0x80 + math.floor(code / 4096) % 64, 0x80 + math.floor(code / 64) % 64,
    0x80 + code % 64)
end

local function hex4(text, at)
  local digits = sub(text, at, at + 3)
  if not digits:match("^%x%x%x%x$") then fail(text, at, "\\u needs four hex digits") end
  return tonumber(digits, 16)
end

local function decode_string(text, at)
  local parts, start = {}, at + 1
  local i = start
  while true do
    local c = byte(text, i)
    if c == nil then fail(text, at, "unterminated string") end
    if c == 34 then
      parts[#parts + 1] = sub(text, start, i - 1)
      return table.concat(parts), i + 1
    elseif c < 32 then
      fail(text, i, "control character in a string")
    elseif c == 92 then
      parts[#parts + 1] = sub(text, start, i - 1)
      local e = byte(text, i + 1)
      if e == 117 then
        local code = hex4(text, i + 2)
        i = i + 6
        if code >= 0xD800 and code <= 0xDBFF then
          if sub(text, i, i + 1) ~= "\\u" then fail(text, i, "lone surrogate") end
          local low = hex4(text, i + 2)
          if low < 0xDC00 or low > 0xDFFF then fail(text, i, "lone surrogate") end
          code = 0x10000 + (code - 0xD800) * 1024 + (low - 0xDC00)
          i = i + 6
        elseif code >= 0xDC00 and code <= 0xDFFF then
          fail(text, i - 6, "lone surrogate")
        end
        parts[#parts + 1] = utf8(code)
      else
        local plain = e and ESCAPES[e]
        if not plain then fail(text, i, "bad escape") end
        parts[#parts + 1] = plain
        i = i + 2
      end
      start = i
    else
      i = i + 1
    end
  end
end

local decode_value

-- -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?
local function decode_number(text, at)
  local i = at
  if byte(text, i) == 45 then i = i + 1 end
  local c = byte(text, i)
  if c == 48 then
    i = i + 1
  elseif c and c >= 49 and c <= 57 then
    i = select(2, find(text, "^%d+", i)) + 1
  else
    fail(text, at, "malformed number")
  end
  if byte(text, i) == 46 then
    local last = select(2, find(text, "^%d+", i + 1))
    if not last then fail(text, at, "malformed number") end
    i = last + 1
  end
  c = byte(text, i)
  if c == 101 or c == 69 then
    i = i + 1
    c = byte(text, i)
    if c == 43 or c == 45 then i = i + 1 end
    local last = select(2, find(text, "^%d+", i))
    if not last then fail(text, at, "malformed number") end
    i = last + 1
  end
  return tonumber(sub(text, at, i - 1)), i
end

local function decode_array(text, at)
  local out = setmetatable({}, array_mt)
  local i = skip_space(text, at + 1)
  if byte(text, i) == 93 then return out, i + 1 end
  while true do
    local value
    value, i = decode_value(text, i)
    out[#out + 1] = value
    i = skip_space(text, i)
    local c = byte(text, i)
    if c == 93 then return out, i + 1 end
    if c ~= 44 then fail(text, i, "expected ',' or ']' in an array") end
    i = skip_space(text, i + 1)
  end
end

local function decode_object(text, at)
  local out = {}
  local i = skip_space(text, at + 1)
  if byte(text, i) == 125 then return out, i + 1 end
  while true do
    if byte(text, i) ~= 34 then fail(text, i, "expected a string key") end
    local key
    key, i = decode_string(text, i)
    i = skip_space(text, i)
    if byte(text, i) ~= 58 then fail(text, i, "expected ':' after a key") end
    local value
    value, i = decode_value(text, skip_space(text, i + 1))
    out[key] = value
    i = skip_space(text, i)
    local c = byte(text, i)
    if c == 125 then return out, i + 1 end
    if c ~= 44 then fail(text, i, "expected ',' or '}' in an object") end
    i = skip_space(text, i + 1)
  end
end

function decode_value(text, at)
  local c = byte(text, at)
  if c == 123 then return decode_object(text, at) end
  if c == 91 then return decode_array(text, at) end
  if c == 34 then return decode_string(text, at) end
  if sub(text, at, at + 3) == "true" then return true, at + 4 end
  if sub(text, at, at + 4) == "false" then return false, at + 5 end
  if sub(text, at, at + 3) == "null" then return M.null, at + 4 end
  if c == 45 or (c and c >= 48 and c <= 57) then return decode_number(text, at) end
  if c == nil then fail(text, at, "unexpected end of text") end
  fail(text, at, "unexpected character '" .. char(c) .. "'")
end

-- The value `text` holds; raises on anything else, text after the value included.
function M.decode(text)
  if type(text) ~= "string" then error("json.decode: expected a string, got a " .. type(text), 2) end
  local value, at = decode_value(text, skip_space(text, 1))
  at = skip_space(text, at)
  if at <= #text then fail(text, at, "text after the value") end
  return value
end

---------------------------------------------------------------------------------------------------
-- Encoding

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local known = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
    return known[c] or ("\\u%04x"):format(byte(c))
  end) .. '"'
end

local encode

local function is_list(t)
  if M.is_array(t) then return true end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n > 0 and n == #t
end

function encode(value, seen)
  local kind = type(value)
  if value == M.null or value == nil then return "null" end
  if kind == "boolean" then return tostring(value) end
  if kind == "number" then
    if value ~= value or value == math.huge or value == -math.huge then return "null" end
    if value % 1 == 0 and math.abs(value) < 2 ^ 53 then return ("%d"):format(value) end
    return ("%.17g"):format(value)
  end
  if kind == "string" then return encode_string(value) end
  if kind ~= "table" then error("json.encode: cannot encode a " .. kind, 0) end
  if seen[value] then error("json.encode: a table contains itself", 0) end
  seen[value] = true
  local parts = {}
  if is_list(value) then
    for i = 1, #value do parts[i] = encode(value[i], seen) end
    seen[value] = nil
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  local keys = {}
  for k in pairs(value) do
    if type(k) ~= "string" then error("json.encode: object keys must be strings, got a " .. type(k), 0) end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = encode_string(k) .. ": " .. encode(value[k], seen) end
  seen[value] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- JSON text for a Lua value (tables with keys 1..n are arrays, others objects with sorted keys).
function M.encode(value) return encode(value, {}) end

-- The members of an object without braces ("\"a\": 1, \"b\": \"x\""): what the C trace API takes.
function M.members(t)
  local text = M.encode(t)
  return text:sub(2, -2)
end

return M
