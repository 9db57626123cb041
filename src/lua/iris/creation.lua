-- Tensor creation: ctx:zeros(), ones, empty, full, arange, linspace, rand, randn, randint, tensor and
-- the *_like forms, methods of the context (iris.context attaches them and checks that they are called
-- on it). All collective: every rank calls them in the same order
-- with the same shapes. Contents are written on every rank before any rank gets the tensor (a
-- barrier), so no rank's early write into a peer's copy is overwritten by that peer's late fill.
local ffi = require "ffi"
local errors = require "iris.errors"
local dtypes = require "iris.dtypes"
local tensor = require "iris.tensor"
local tensor_data = require "iris.tensor_data"
local C = ffi.C

local M = {}

local function dtype_or(dtype, default, what)
  if dtype == nil then return dtypes.get(default, what) end
  return dtypes.get(dtype, what)
end

-- After a rank wrote a new tensor's contents: every rank waits until every rank has.
local function publish(t, op)
  if C.iris_world_size() > 1 then errors.check_waiting(C.iris_barrier, op) end
  return t
end

local function new(self, what, shape, dtype, default_dtype, zero)
  local dt = dtype_or(dtype, default_dtype, what)
  local dims, numel = tensor.check_shape(shape, what)
  return tensor.allocate(what .. "()", dims, numel, dt, zero)
end

function M.zeros(self, shape, dtype) return new(self, "ctx:zeros", shape, dtype, "float32", true) end
function M.empty(self, shape, dtype) return new(self, "ctx:empty", shape, dtype, "float32", false) end

local function filled(self, what, shape, value, dtype)
  local dt = dtype_or(dtype, type(value) == "boolean" and "bool" or "float32", what)
  dt.encode(value, what) -- a bad value fails before the collective allocation, on every rank alike
  local t = new(self, what, shape, dt.name, nil, false)
  t:fill(value)
  return publish(t, what .. "()")
end

function M.ones(self, shape, dtype) return filled(self, "ctx:ones", shape, 1, dtype) end
function M.full(self, shape, value, dtype) return filled(self, "ctx:full", shape, value, dtype) end

local function like(self, what, t, dtype)
  tensor.check_live(t, what, true)
  return t:shape(), dtype or t.dtype
end

function M.zeros_like(self, t, dtype) return self:zeros(like(self, "ctx:zeros_like", t, dtype)) end
function M.empty_like(self, t, dtype) return self:empty(like(self, "ctx:empty_like", t, dtype)) end
function M.ones_like(self, t, dtype) return self:ones(like(self, "ctx:ones_like", t, dtype)) end
function M.full_like(self, t, value, dtype)
  local shape, dt = like(self, "ctx:full_like", t, dtype)
  return self:full(shape, value, dt)
end

---------------------------------------------------------------------------------------------------
-- Sequences

local function check_number(v, what, name)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
    errors.raise("invalid_argument", "%s: %s must be a finite number, got %s", what, name, tostring(v))
  end
end

-- Writes start + k * step (k = 0..n-1; the last one `last` when given) into a new tensor.
local function sequence(self, what, n, dt, start, step, last)
  local t = new(self, what, n, dt.name, nil, false)
  local ptr, memory = tensor_data.host_destination(t)
  local encode = dt.encode
  for k = 0, n - 1 do
    local v = start + k * step
    if last ~= nil and k == n - 1 then v = last end
    ptr[k] = encode(v, what)
  end
  tensor_data.finish_write(t, ptr, memory)
  return publish(t, what .. "()")
end

-- ctx:arange(n [, dtype]) or ctx:arange(start, stop [, step [, dtype]]): [start, stop) by step.
function M.arange(self, a, b, c, d)
  local what = "ctx:arange"
  local start, stop, step, dtype
  if type(b) ~= "number" then
    start, stop, step, dtype = 0, a, 1, b
    if c ~= nil then errors.raise("invalid_argument", "%s(n [, dtype]): too many arguments", what) end
  elseif type(c) == "number" then
    start, stop, step, dtype = a, b, c, d
  else
    start, stop, step, dtype = a, b, 1, c
    if d ~= nil then errors.raise("invalid_argument", "%s(start, stop [, step [, dtype]]): step must be a number", what) end
  end
  check_number(start, what, "start")
  check_number(stop, what, "stop")
  check_number(step, what, "step")
  if step == 0 then errors.raise("invalid_argument", "%s: step must not be 0", what) end
  local n = math.ceil((stop - start) / step)
  if n <= 0 then
    errors.raise("invalid_argument", "%s: start %s, stop %s, step %s is an empty range", what, tostring(start),
      tostring(stop), tostring(step))
  end
  local whole = start % 1 == 0 and stop % 1 == 0 and step % 1 == 0
  local dt = dtype_or(dtype, whole and "int64" or "float32", what)
  return sequence(self, what, n, dt, start, step)
end

-- `steps` evenly spaced values from start to stop, both included.
function M.linspace(self, start, stop, steps, dtype)
  local what = "ctx:linspace"
  check_number(start, what, "start")
  check_number(stop, what, "stop")
  if type(steps) ~= "number" or steps % 1 ~= 0 or steps < 0 then
    errors.raise("invalid_argument", "%s: steps must be a whole number >= 0, got %s", what, tostring(steps))
  end
  local dt = dtype_or(dtype, "float32", what)
  local step = steps > 1 and (stop - start) / (steps - 1) or 0
  return sequence(self, what, steps, dt, start, step, steps > 1 and stop or nil)
end

---------------------------------------------------------------------------------------------------
-- From Lua values

-- The number of elements of `value`, a table of values at `path` ("" at the top, "[2]" below): its keys
-- must be exactly 1..n. `#` alone is any border of a table with holes ({1, nil, 3} may be 1 or 3).
local function sequence_length(value, what, path)
  local count, last = 0, 0
  for key in pairs(value) do
    if type(key) ~= "number" or key < 1 or key % 1 ~= 0 then
      errors.raise("invalid_argument", "%s: the table%s has the key %s; a tensor's values are a list {v1, v2, ...}",
        what, path == "" and "" or (" at " .. path), type(key) == "string" and ("'" .. key .. "'") or tostring(key))
    end
    count = count + 1
    if key > last then last = key end
  end
  if count ~= last then
    local hole = 1
    while value[hole] ~= nil do hole = hole + 1 end
    errors.raise("invalid_argument", "%s: element %s[%d] is nil: a list of values has no holes (%d of %d positions set)",
      what, path, hole, count, last)
  end
  return count
end

-- The shape of a nested table (rectangular), and the first leaf value. A table that contains itself
-- is an error, not an endless descent.
local function nested_shape(value, what)
  local dims, seen, path = {}, {}, ""
  local v = value
  while type(v) == "table" and not tensor.is_tensor(v) do
    if seen[v] then
      errors.raise("invalid_argument", "%s: the table contains itself: element %s is the table at %s", what, path,
        seen[v] == "" and "the top" or seen[v])
    end
    seen[v] = path
    local n = sequence_length(v, what, path)
    dims[#dims + 1] = n
    if n == 0 then break end
    v = v[1]
    path = path .. "[1]"
  end
  return dims, v
end

local function flatten(value, dims, d, out, what, path)
  if d > #dims then
    if type(value) == "table" then
      errors.raise("invalid_argument", "%s: element %s is a table where a value was expected (ragged nesting)", what, path)
    end
    out[#out + 1] = value
    return
  end
  local n = type(value) == "table" and sequence_length(value, what, path)
  if n ~= dims[d] then
    errors.raise("invalid_argument", "%s: element %s has %s, expected a table of %d (ragged nesting)", what,
      path == "" and "at the top" or path, n and (n .. " entries") or ("a " .. type(value)), dims[d])
  end
  for i = 1, dims[d] do flatten(value[i], dims, d + 1, out, what, path .. "[" .. i .. "]") end
end

-- ctx:tensor({{1, 2}, {3, 4}} [, dtype]); a number gives a 0-d tensor. Default dtype: bool for
-- booleans, else float32.
function M.tensor(self, value, dtype)
  local what = "ctx:tensor"
  if tensor.is_tensor(value) then
    errors.raise("invalid_argument", "%s: takes Lua values; copy a tensor with t:clone()", what)
  end
  local dims, first = nested_shape(value, what)
  local values = {}
  flatten(value, dims, 1, values, what, "")
  local dt = dtype_or(dtype, type(first) == "boolean" and "bool" or "float32", what)
  for i = 1, #values do dt.encode(values[i], what) end -- bad values fail before the allocation
  local t = new(self, what, dims, dt.name, nil, false)
  tensor_data.write_values(t, values, what)
  return publish(t, what .. "()")
end

---------------------------------------------------------------------------------------------------
-- Random numbers (docs/memory.md "Random streams")
--
-- Without a seed, calls draw from the context's generator: ctx:manual_seed(seed [, {shared = true}])
-- sets it (default seed 0); each call takes the next stream of it. With a seed, the call's stream is
-- that seed's alone. Streams differ per rank unless shared: a seed {seed = 7, shared = true} (or a
-- shared generator) gives every rank the same numbers.

local DISTRIBUTION = { uniform = 0, normal = 1, integer = 2 }

local function check_seed(seed, what)
  if type(seed) ~= "number" or seed % 1 ~= 0 or seed < 0 or seed >= 2 ^ 64 then
    errors.raise("invalid_argument", "%s: a seed is a whole number >= 0, got %s", what, tostring(seed))
  end
  return seed
end

M.SEED_OPTIONS = { "seed", "shared" }
M.MANUAL_SEED_OPTIONS = { "shared" }

-- seed argument -> seed, stream, counter
local function stream_of(self, seed, what)
  local per_rank_stream = self.rank + 1
  if seed == nil then
    self._draws = (self._draws or 0) + 1
    return self._seed or 0, self._seed_shared and 0 or per_rank_stream, self._draws
  end
  if type(seed) == "table" then
    errors.check_keys(seed, M.SEED_OPTIONS, what, "seed option")
    return check_seed(seed.seed, what), seed.shared and 0 or per_rank_stream, 0
  end
  return check_seed(seed, what), per_rank_stream, 0
end

-- `what`: the name the user called it by (iris.manual_seed calls it too).
function M.manual_seed(self, seed, options, what)
  what = what or "ctx:manual_seed"
  if options ~= nil then
    if type(options) ~= "table" then
      errors.raise("invalid_argument", "%s(seed [, {shared = true}]): options must be a table, got a %s", what,
        type(options))
    end
    errors.check_keys(options, M.MANUAL_SEED_OPTIONS, what)
  end
  self._seed = check_seed(seed, what)
  self._seed_shared = options ~= nil and options.shared and true or false
  self._draws = 0
end

local function random(self, what, shape, dt, distribution, a, b, seed)
  local s, stream, counter = stream_of(self, seed, what)
  local t = new(self, what, shape, dt.name, nil, false)
  errors.check(C.iris_fill_random(t:data_ptr(), dt.name, t:numel(), DISTRIBUTION[distribution], a, b, s, stream, counter))
  return publish(t, what .. "()")
end

-- The optional dtype may be left out before a seed: ctx:rand(n, 42) == ctx:rand(n, nil, 42).
local function dtype_and_seed(dtype, seed)
  if seed == nil and dtype ~= nil and not dtypes.is_dtype(dtype) and (type(dtype) == "number" or type(dtype) == "table") then
    return nil, dtype
  end
  return dtype, seed
end

local function floating(dtype, what)
  local dt = dtype_or(dtype, "float32", what)
  if dt.kind ~= "float" then
    errors.raise("invalid_argument", "%s makes floating-point numbers, %s is not a floating-point dtype (for integers: "
      .. "ctx:randint)", what, dt.name)
  end
  return dt
end

-- Uniform in [0, 1).
function M.rand(self, shape, dtype, seed)
  dtype, seed = dtype_and_seed(dtype, seed)
  return random(self, "ctx:rand", shape, floating(dtype, "ctx:rand"), "uniform", 0, 1, seed)
end

-- Standard normal.
function M.randn(self, shape, dtype, seed)
  dtype, seed = dtype_and_seed(dtype, seed)
  return random(self, "ctx:randn", shape, floating(dtype, "ctx:randn"), "normal", 0, 1, seed)
end

-- Whole numbers in [low, high).
function M.randint(self, low, high, shape, dtype, seed)
  local what = "ctx:randint"
  dtype, seed = dtype_and_seed(dtype, seed)
  local dt = dtype_or(dtype, "int64", what)
  if type(low) ~= "number" or type(high) ~= "number" or low % 1 ~= 0 or high % 1 ~= 0 or low >= high then
    errors.raise("invalid_argument", "%s(low, high, shape): low and high are whole numbers with low < high, got %s and %s",
      what, tostring(low), tostring(high))
  end
  local lo, hi
  if dt.kind == "int" then
    -- exclusive upper bound; 2^63 and 2^64 are exact doubles where max + 1 would not be
    lo, hi = dt.min, dt.size == 8 and (dt.min < 0 and 2 ^ 63 or 2 ^ 64) or dt.max + 1
  elseif dt.kind == "bool" then
    lo, hi = 0, 2
  else
    lo, hi = -2 ^ 53, 2 ^ 53
  end
  if low < lo or high > hi then
    errors.raise("invalid_argument", "%s: [%s, %s) does not fit dtype %s", what, tostring(low), tostring(high), dt.name)
  end
  return random(self, what, shape, dt, "integer", low, high, seed)
end


return M
