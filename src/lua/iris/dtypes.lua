-- Tensor element types (docs/memory.md, "Dtypes and conversions"): a dtype is its name, "float32" == iris.float32.
--
-- Each dtype's info table says how its elements are stored and how a Lua value becomes an element:
--   size     bytes per element
--   ctype    the C type of the storage (bool is a byte, float16/bfloat16 are their 16-bit patterns)
--   ptr_t    the FFI pointer type to that storage
--   kind     "bool", "int" or "float"
--   encode(v, what)  Lua value -> storage value, or an error naming `what` ("t:set") and the value
--   decode(x)        storage value -> Lua value (numbers; booleans for bool)
--   number(x)        storage value -> Lua number (bool: 0 or 1), for reductions
-- encode/decode/number are created once here, so element access calls the same functions every time
-- (JIT-friendly: no closure per call).
local ffi = require "ffi"
local errors = require "iris.errors"
local codes = require "iris.codes"
local C = ffi.C

local M = {}

-- The dtypes, their sizes and kinds are device/iris/impl/abi.h's list (iris.codes), which the device and
-- the heap read too; below, how each is stored and converted from Lua.
M.names = codes.names(codes.dtypes)

local info = {}
M.info = info

local function bad_value(dt, v, what)
  local shown = type(v) == "string" and ("'" .. v .. "'") or tostring(v)
  local hint = ""
  if dt.kind == "int" and type(v) == "number" then
    if v % 1 ~= 0 then
      hint = " (not a whole number)"
    else
      hint = (" (outside %s's range %s to %s)"):format(dt.name, dt.range_text[1], dt.range_text[2])
    end
  end
  errors.raise("invalid_argument", "%s: %s is not %s %s value%s", what, shown, dt.article, dt.name, hint)
end

local function identity(x) return x end

local function define(name, ctype, kind)
  local entry = codes.dtype[name]
  assert(entry and entry.kind == kind, name .. " is not a dtype of kind " .. kind .. " in IRIS_DTYPE_CODES")
  local dt = {
    name = name, size = entry.size, ctype = ctype, kind = kind,
    article = name:sub(1, 1) == "i" and "an" or "a",
    ptr_t = ffi.typeof(ctype .. "*"),
    array_t = ffi.typeof(ctype .. "[?]"),
  }
  dt.scratch = ffi.new(dt.array_t, 1) -- one element, for reads and writes through backend copies
  info[name] = dt
  return dt
end

local function define_float(name, ctype)
  local dt = define(name, ctype, "float")
  function dt.encode(v, what)
    if type(v) ~= "number" then bad_value(dt, v, what) end
    return v
  end
  dt.decode = identity
  dt.number = identity
end

local function define_half(name, to_bits, from_bits)
  local dt = define(name, "uint16_t", "float")
  function dt.encode(v, what)
    if type(v) ~= "number" then bad_value(dt, v, what) end
    return to_bits(v)
  end
  dt.decode = from_bits
  dt.number = from_bits
end

-- Integers of up to 32 bits read as Lua numbers; 64-bit ones read as boxed cdata, made numbers
-- (exact up to 2^53) by tonumber. Writes take whole numbers in range, and int64/uint64 cdata for the
-- 64-bit types (exact over their whole range).
local function define_int(name, ctype, lo, hi, lo_text, hi_text)
  local dt = define(name, ctype, "int")
  dt.min, dt.max = lo, hi
  dt.range_text = { lo_text or ("%d"):format(lo), hi_text or ("%d"):format(hi) }
  local wide = dt.size == 8
  function dt.encode(v, what)
    if type(v) == "number" then
      if v % 1 ~= 0 or v < lo or v > hi then bad_value(dt, v, what) end
      return v
    end
    if wide and type(v) == "cdata" and (ffi.istype("int64_t", v) or ffi.istype("uint64_t", v)) then return v end
    bad_value(dt, v, what)
  end
  if wide then
    dt.decode = tonumber
    dt.number = tonumber
  else
    dt.decode = identity
    dt.number = identity
  end
end

do
  local dt = define("bool", "uint8_t", "bool")
  function dt.encode(v, what)
    if v == true or v == 1 then return 1 end
    if v == false or v == 0 then return 0 end
    bad_value(dt, v, what)
  end
  function dt.decode(x) return x ~= 0 end
  dt.number = identity
end

define_int("int8", "int8_t", -128, 127)
define_int("uint8", "uint8_t", 0, 255)
define_int("int16", "int16_t", -32768, 32767)
define_int("int32", "int32_t", -2147483648, 2147483647)
define_int("uint32", "uint32_t", 0, 4294967295)
-- The bounds as doubles: 2^63 and 2^64 themselves do not fit, so the test is v < 2^63 (v <= max as
-- the largest double below it).
define_int("int64", "int64_t", -2 ^ 63, 2 ^ 63 - 1024, "-2^63", "2^63-1")
define_int("uint64", "uint64_t", 0, 2 ^ 64 - 2048, "0", "2^64-1")
define_half("float16", C.iris_float16_from_double, C.iris_float16_to_double)
define_half("bfloat16", C.iris_bfloat16_from_double, C.iris_bfloat16_to_double)
define_float("float32", "float")
define_float("float64", "double")
for _, name in ipairs(M.names) do
  local dt = info[name]
  assert(dt and ffi.sizeof(dt.ctype) == dt.size, "dtypes.lua defines no storage of the right size for " .. name)
end

local name_list = table.concat(M.names, ", ")

-- The info of dtype `name`; `what` names the caller for the error ("ctx:zeros").
function M.get(name, what)
  local dt = info[name]
  if dt then return dt end
  if type(name) == "string" then
    errors.raise("invalid_argument", "%s: unknown dtype '%s' (dtypes: %s)", what, name, name_list)
  end
  errors.raise("invalid_argument", "%s: a dtype is a name such as iris.float32, got a %s (dtypes: %s)", what,
    type(name), name_list)
end

function M.is_dtype(v) return info[v] ~= nil end

return M
