-- iris.assert_equal and iris.assert_allclose (docs/lua-testing.md): compare tensors, numbers and
-- (nested) tables, and on failure say where they differ (the first differing element, 1-based per
-- dimension), what was found, what was expected, how many elements differ, and on which rank.
--
-- Each side is first seen as a list of elements with a shape: a tensor (one to_table()), a
-- rectangular nested table of numbers and booleans, or a number or boolean (a scalar; as the expected
-- value it stands for every element of the actual one). Other tables are compared key by key. The
-- loops run over flat Lua arrays, so a large tensor costs one to_table().
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local abs, huge, floor = math.abs, math.huge, math.floor
local concat = table.concat

local M = {}

local DEFAULT_RTOL, DEFAULT_ATOL = 1e-5, 1e-8

-- Tensors come from the memory part (iris.tensor); without it, nothing is a tensor.
local function tensor_module()
  local module = package.loaded["iris.tensor"]
  if module == nil and package.preload["iris.tensor"] ~= nil then module = require "iris.tensor" end
  return module
end

local function is_int64(v)
  return type(v) == "cdata" and (ffi.istype("int64_t", v) or ffi.istype("uint64_t", v))
end

local function is_scalar(v)
  local t = type(v)
  return t == "number" or t == "boolean" or is_int64(v)
end

---------------------------------------------------------------------------------------------------
-- Formatting

local float32_box = ffi.new("float[1]")

-- The shortest text that reads back as the same value: in float32 for the 32- and 16-bit float
-- dtypes (their values are exactly float32 values), else in double.
local function format_number(x, dtype)
  if x ~= x then return "nan" end
  if x == huge then return "inf" end
  if x == -huge then return "-inf" end
  if x == floor(x) and abs(x) < 2 ^ 53 then return ("%d"):format(x) end
  local single = dtype == "float32" or dtype == "float16" or dtype == "bfloat16"
  for digits = 1, 17 do
    local text = ("%." .. digits .. "g"):format(x)
    local back = tonumber(text)
    if single then
      float32_box[0] = back
      back = float32_box[0]
    end
    if back == x then return text end
  end
  return ("%.17g"):format(x)
end

local function format_value(v, dtype)
  local t = type(v)
  if t == "number" then return format_number(v, dtype) end
  if t == "string" then return ("%q"):format(v) end
  if is_int64(v) then return (tostring(v):gsub("U?LL$", "")) end
  return tostring(v)
end

-- Two different numbers that print the same at their own precision (float32 0.1 against 0.1) are
-- shown at double precision, so the message never reads "got 0.1, expected 0.1".
local function format_pair(got, expected, got_dtype, expected_dtype)
  local g, e = format_value(got, got_dtype), format_value(expected, expected_dtype)
  if g == e and got ~= expected and type(got) == "number" and type(expected) == "number" then
    g, e = format_number(got), format_number(expected)
  end
  return g, e
end

local function format_shape(shape)
  local dims = {}
  for i = 1, #shape do dims[i] = tostring(shape[i]) end
  return "[" .. concat(dims, ", ") .. "]"
end

-- "[2, 17]" for the 1-based flat position `k` in a row-major array of `shape`.
local function format_index(k, shape)
  local index, rest = {}, k - 1
  for d = #shape, 1, -1 do
    index[d] = rest % shape[d] + 1
    rest = floor(rest / shape[d])
  end
  return format_shape(index)
end

---------------------------------------------------------------------------------------------------
-- Reading a side

local function numel_of(shape)
  local n = 1
  for d = 1, #shape do n = n * shape[d] end
  return n
end

-- Keys 1..n and nothing else.
local function is_sequence(t)
  local n = #t
  local count = 0
  for _ in pairs(t) do
    count = count + 1
    if count > n then return false end
  end
  return count == n
end

-- The shape of a rectangular nested table of scalars, or nil. Its shape follows the first element
-- at each depth; `flatten` checks that every other element agrees.
local function table_shape(t)
  local shape = {}
  local level = t
  while type(level) == "table" do
    if not is_sequence(level) then return nil end
    shape[#shape + 1] = #level
    if #level == 0 then break end
    level = level[1]
  end
  return shape
end

-- Appends the elements of `t` (of `shape` from `depth` on) to `out` in row-major order; false when
-- it is not rectangular or holds something other than scalars. Without `out` it only checks.
local function flatten(t, shape, depth, out)
  if depth == #shape then
    for i = 1, #t do
      local v = t[i]
      if not is_scalar(v) then return false end
      if out then out[#out + 1] = v end
    end
    return true
  end
  for i = 1, #t do
    local sub = t[i]
    if type(sub) ~= "table" or not is_sequence(sub) or #sub ~= shape[depth + 1] then return false end
    if not flatten(sub, shape, depth + 1, out) then return false end
  end
  return true
end

-- A side as { kind = "tensor" | "array" | "scalar" | "table" | "other", values, shape, dtype, value }.
local function read_side(v, tensors)
  if tensors ~= nil and tensors.is_tensor(v) then
    return { kind = "tensor", values = v:to_table(), shape = v:shape(), dtype = v.dtype }
  end
  if is_scalar(v) then return { kind = "scalar", value = v } end
  if type(v) == "table" then
    local shape = table_shape(v)
    if shape ~= nil then
      -- A flat table is its own array of elements; a nested one is copied into one.
      local values = #shape > 1 and {} or nil
      if flatten(v, shape, 1, values) then return { kind = "array", values = values or v, shape = shape } end
    end
    return { kind = "table", value = v }
  end
  return { kind = "other", value = v }
end

local function what_it_is(side)
  if side.kind == "tensor" then
    local article = side.dtype:sub(1, 1) == "i" and "an" or "a" -- "an int32 tensor", "a float32 tensor"
    return ("%s %s tensor of shape %s"):format(article, side.dtype, format_shape(side.shape))
  end
  if side.kind == "array" then return ("a table of shape %s"):format(format_shape(side.shape)) end
  if side.kind == "table" then return "a table" end
  local v = side.value
  if v == nil or is_scalar(v) or type(v) == "string" then return format_value(v) end
  return "a " .. type(v)
end

---------------------------------------------------------------------------------------------------
-- Comparing

-- For a bool tensor, numbers and booleans compare by truth.
local function truth_values(values)
  local out = {}
  for i = 1, #values do
    local v = values[i]
    out[i] = v ~= false and v ~= 0
  end
  return out
end

-- Elements 1..n of `a` against `b`, or against the single value `b` when `b_is_scalar`: the number
-- that differ and the first one's position.
local function count_differences(a, b, b_is_scalar, n, same)
  local count, first = 0, nil
  if b_is_scalar then
    for i = 1, n do
      if not same(a[i], b) then
        count = count + 1
        first = first or i
      end
    end
  else
    for i = 1, n do
      if not same(a[i], b[i]) then
        count = count + 1
        first = first or i
      end
    end
  end
  return count, first
end

local function shapes_equal(s, t)
  if #s ~= #t then return false end
  for d = 1, #s do
    if s[d] ~= t[d] then return false end
  end
  return true
end

-- The shape to compare in: equal shapes, or a tensor against a flat table of as many elements (the
-- form to_table() gives). Nil when they do not fit.
local function common_shape(a, b)
  if shapes_equal(a.shape, b.shape) then return a.shape end
  for _, pair in ipairs { { a, b }, { b, a } } do
    local tensor, other = pair[1], pair[2]
    if tensor.kind == "tensor" and other.kind == "array" and #other.shape == 1
        and other.shape[1] == numel_of(tensor.shape) then
      return tensor.shape
    end
  end
  return nil
end

-- The path of a key inside nested tables: .name, [2], ["odd key"].
local function key_path(path, key)
  if type(key) == "string" and key:match("^[%a_][%w_]*$") then return path .. "." .. key end
  if type(key) == "string" then return path .. ("[%q]"):format(key) end
  return path .. "[" .. tostring(key) .. "]"
end

-- Compares two general tables key by key; `state` collects the leaf count, the number that differ
-- and the first difference.
local function compare_tables(a, b, same, path, state, seen)
  if seen[a] == b then return end -- cycles
  seen[a] = b
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do
    if a[k] == nil then keys[#keys + 1] = k end
  end
  table.sort(keys, function(x, y)
    if type(x) == type(y) and (type(x) == "number" or type(x) == "string") then return x < y end
    return type(x) < type(y)
  end)
  for _, k in ipairs(keys) do
    local x, y, where = a[k], b[k], key_path(path, k)
    if type(x) == "table" and type(y) == "table" then
      compare_tables(x, y, same, where, state, seen)
    else
      state.total = state.total + 1
      if not same(x, y) then
        state.differ = state.differ + 1
        if state.first == nil then state.first = { where = where, got = x, expected = y } end
      end
    end
  end
end

---------------------------------------------------------------------------------------------------
-- The assertions
--
-- A rule says how two elements compare: `same(got, expected)`, and `note(got, expected)`, the words
-- that explain a difference (nil for exact comparison).

-- "(note; note)" or "".
local function notes(...)
  local list = {}
  for i = 1, select("#", ...) do
    local note = select(i, ...)
    if note ~= nil then list[#list + 1] = note end
  end
  return #list > 0 and " (" .. concat(list, "; ") .. ")" or ""
end

local function differing_pair(got, expected, rule, got_dtype, expected_dtype)
  local g, e = format_pair(got, expected, got_dtype, expected_dtype)
  return ("got %s, expected %s"):format(g, e), rule.note(got, expected)
end

local function compare_scalars(a, b, rule)
  if rule.same(a, b) then return nil end
  local text, note = differing_pair(a, b, rule)
  return text .. notes(note)
end

local function compare_general_tables(a, b, rule)
  local state = { total = 0, differ = 0 }
  compare_tables(a, b, rule.same, "", state, {})
  if state.differ == 0 then return nil end
  local f = state.first
  local text, note = differing_pair(f.got, f.expected, rule)
  return ("at %s: %s"):format(f.where, text)
      .. notes(("%d of %d values differ"):format(state.differ, state.total), note)
end

-- A tensor or rectangular table (`a`) element by element against another or against a scalar (`b`),
-- which then stands for every element.
local function compare_elements(a, b, rule)
  local broadcast = b.kind == "scalar"
  local shape = a.shape
  if not broadcast then
    shape = common_shape(a, b)
    local problems = {}
    if shape == nil then
      problems[#problems + 1] = ("shape mismatch: got %s, expected %s"):format(what_it_is(a), what_it_is(b))
    end
    if a.kind == "tensor" and b.kind == "tensor" and a.dtype ~= b.dtype then
      problems[#problems + 1] = ("dtype mismatch: got %s, expected %s"):format(a.dtype, b.dtype)
    end
    if #problems > 0 then return concat(problems, "; ") end
  end

  local a_values, b_values = a.values, broadcast and { b.value } or b.values
  if a.dtype == "bool" or b.dtype == "bool" then
    a_values, b_values = truth_values(a_values), truth_values(b_values)
  end
  local n = numel_of(shape)
  local b_side = b_values
  if broadcast then b_side = b_values[1] end
  local count, first = count_differences(a_values, b_side, broadcast, n, rule.same)
  if count == 0 then return nil end

  local got, wanted = a_values[first], b_values[broadcast and 1 or first]
  local text, note = differing_pair(got, wanted, rule, a.dtype, b.dtype)
  if #shape == 0 then return text .. notes(note) end -- a 0-d tensor: one element, no position
  return ("at %s: %s"):format(format_index(first, shape), text)
      .. notes(("%d of %d elements differ"):format(count, n), note)
end

-- Nil when `actual` matches `expected`, else what differs.
local function compare(actual, expected, rule)
  local tensors = tensor_module()
  local a, b = read_side(actual, tensors), read_side(expected, tensors)
  local many = { tensor = true, array = true }
  if a.kind == "scalar" and b.kind == "scalar" or a.kind == "other" and b.kind == "other" then
    return compare_scalars(a.value, b.value, rule)
  end
  -- An expected scalar stands for every element; an actual scalar is not a tensor or a table.
  if many[a.kind] and (many[b.kind] or b.kind == "scalar") then
    return compare_elements(a, b, rule)
  end
  if type(actual) == "table" and type(expected) == "table" and a.kind ~= "tensor" and b.kind ~= "tensor" then
    return compare_general_tables(actual, expected, rule)
  end
  return ("got %s, expected %s"):format(what_it_is(a), what_it_is(b))
end

-- Raises the failure at the user's line: "file:line: NAME failed on rank R[: msg]: detail".
local function fail(name, msg, detail)
  local text = ("%s failed on rank %d"):format(name, C.iris_rank())
  if msg ~= nil then text = text .. ": " .. tostring(msg) end
  errors.raise("assertion", "%s: %s", text, detail)
end

local function nan_note(a, b, advice)
  if a ~= a and b ~= b then return "NaN never equals NaN; " .. advice end
  return nil
end

local EXACT = {
  same = function(a, b) return a == b end,
  note = function(a, b) return nan_note(a, b, "iris.assert_allclose(a, b, {equal_nan = true}) accepts it") end,
}

function M.assert_equal(actual, expected, msg)
  local detail = compare(actual, expected, EXACT)
  if detail ~= nil then fail("assert_equal", msg, detail) end
end

local ALLCLOSE_OPTIONS = { rtol = "number", atol = "number", equal_nan = "boolean", msg = "any" }
M.ALLCLOSE_OPTION_NAMES = { "rtol", "atol", "equal_nan", "msg" }

local function allclose_options(opts)
  if opts == nil then return {} end
  if type(opts) == "string" then return { msg = opts } end
  if type(opts) ~= "table" then
    errors.raise("invalid_argument", "iris.assert_allclose(a, b, opts): opts must be a table "
      .. "{rtol=, atol=, equal_nan=, msg=} or a message, got a %s", type(opts))
  end
  errors.check_keys(opts, M.ALLCLOSE_OPTION_NAMES, "iris.assert_allclose")
  for k, v in pairs(opts) do
    local wanted = ALLCLOSE_OPTIONS[k]
    if wanted ~= "any" and type(v) ~= wanted then
      errors.raise("invalid_argument", "iris.assert_allclose: option %s must be a %s, got a %s", k, wanted, type(v))
    end
    if (k == "rtol" or k == "atol") and not (v >= 0) then
      errors.raise("invalid_argument", "iris.assert_allclose: option %s must be 0 or more, got %s", k, tostring(v))
    end
  end
  return opts
end

-- |got - expected| <= atol + rtol * |expected|, as torch.allclose; NaN matches NaN only with equal_nan.
local function close_rule(rtol, atol, equal_nan)
  local limits = ("rtol %s, atol %s"):format(format_number(rtol), format_number(atol))
  local function same(a, b)
    if a == b then return true end
    if is_int64(a) or is_int64(b) then a, b = tonumber(a), tonumber(b) end
    if type(a) ~= "number" or type(b) ~= "number" then return false end
    if a ~= a or b ~= b then return equal_nan and a ~= a and b ~= b end
    if abs(a) == huge or abs(b) == huge then return false end
    return abs(a - b) <= atol + rtol * abs(b)
  end
  local function note(a, b)
    a, b = tonumber(a), tonumber(b)
    if a == nil or b == nil then return nil end
    if not equal_nan and a ~= a and b ~= b then return nan_note(a, b, "equal_nan = true accepts it") end
    if a - b ~= a - b or abs(a - b) == huge then return limits end
    return ("|difference| %.3g > %.3g allowed by %s"):format(abs(a - b), atol + rtol * abs(b), limits)
  end
  return { same = same, note = note }
end

function M.assert_allclose(actual, expected, opts)
  opts = allclose_options(opts)
  local rule = close_rule(opts.rtol or DEFAULT_RTOL, opts.atol or DEFAULT_ATOL, opts.equal_nan)
  local detail = compare(actual, expected, rule)
  if detail ~= nil then fail("assert_allclose", opts.msg, detail) end
end


return M
