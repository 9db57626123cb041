-- Operations on whole tensors: moving elements between tensors and host memory, fill, copy, clone,
-- to_table, reductions and comparisons (results are Lua values, computed on the host). Methods of a
-- tensor, which iris.tensor attaches beside iris.tensor_core's; the representation is described there.
local ffi = require "ffi"
local errors = require "iris.errors"
local tensor = require "iris.tensor_core"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

local is_tensor = tensor.is_tensor
local check_live = tensor.check_live
local check_writable = tensor.check_writable
local shape_text = tensor.shape_text
local capture = graph.state
---------------------------------------------------------------------------------------------------
-- Bulk transfers between a tensor and contiguous host memory

-- Moves every element between `t` (any strides) and `host` (typed pointer to numel contiguous
-- elements, row-major), to_host or from it, in runs as long as the tensor's layout allows.
local function transfer(t, host, to_host)
  if t._numel == 0 then return end
  -- (while ctx:capture(fn) runs the host never addresses the device itself: every access comes here)
  if capture.on then
    graph.refuse(nil, nil, to_host and "reading a tensor on the host" or "writing a tensor from the host")
  end
  local host_direct = tensor.host_direct() and not t._remote
  local dims, strides, nd = t._shape, t._strides, t._ndim
  local esize = t._dt.size
  -- The trailing dimensions that are contiguous form one run.
  local run, inner = 1, nd
  while inner >= 1 and (dims[inner] == 1 or strides[inner] == run) do
    run = run * dims[inner]
    inner = inner - 1
  end
  local bytes = run * esize
  local index = {}
  for d = 1, inner do index[d] = 0 end
  local e, h = 0, 0
  local ptr = t._ptr
  while true do
    if to_host then
      if host_direct then ffi.copy(host + h, ptr + e, bytes)
      else errors.check(C.iris_copy_to_host(host + h, ptr + e, bytes)) end
    else
      if host_direct then ffi.copy(ptr + e, host + h, bytes)
      else errors.check(C.iris_copy_from_host(ptr + e, host + h, bytes)) end
    end
    h = h + run
    local d = inner
    while d >= 1 do
      index[d] = index[d] + 1
      e = e + strides[d]
      if index[d] < dims[d] then break end
      e = e - strides[d] * dims[d]
      index[d] = 0
      d = d - 1
    end
    if d < 1 then return end
  end
end

-- Host memory for `numel` elements of `dt`: a typed pointer, and the allocation itself. Give the
-- allocation to release_buffer() once done (that use also keeps it alive while the pointer is in use:
-- a cast pointer does not); the garbage collector frees it should an error come first.
local function host_buffer(dt, numel)
  local bytes = math.max(numel, 1) * dt.size
  local memory = C.iris_host_alloc(bytes)
  if memory == nil then errors.raise("invalid_argument", "out of host memory staging %d bytes", bytes) end
  memory = ffi.gc(memory, C.iris_host_free)
  return ffi.cast(dt.ptr_t, memory), memory
end

local function release_buffer(memory)
  if memory ~= nil then
    ffi.gc(memory, nil)
    C.iris_host_free(memory)
  end
end
M.release_buffer = release_buffer

-- t's elements as contiguous host memory: a typed pointer and the staging buffer to release_buffer()
-- afterwards (nil when the pointer is the tensor's own memory: cpu backend, contiguous tensor).
local function host_elements(t)
  if tensor.host_direct() and t._contiguous and not t._remote then return t._ptr, nil end
  local host, memory = host_buffer(t._dt, t._numel)
  transfer(t, host, true)
  return host, memory
end
M.host_elements = host_elements

-- Where t's new contents can be written as contiguous host memory; then finish_write(t, ptr, memory)
-- moves them into the tensor (when they were staged) and releases the staging buffer.
local function host_destination(t)
  if tensor.host_direct() and t._contiguous and not t._remote then return t._ptr, nil end
  return host_buffer(t._dt, t._numel)
end
M.host_destination = host_destination

local function finish_write(t, ptr, memory)
  if memory ~= nil then
    transfer(t, ptr, false)
    release_buffer(memory)
  end
end
M.finish_write = finish_write

-- Writes Lua values from `values` (a flat array, 1-based) into t, encoding each.
function M.write_values(t, values, what)
  local encode = t._dt.encode
  local ptr, memory = host_destination(t)
  for k = 0, t._numel - 1 do ptr[k] = encode(values[k + 1], what) end
  finish_write(t, ptr, memory)
end


function M.fill(self, v)
  check_live(self, "t:fill")
  check_writable(self, "t:fill")
  local dt = self._dt
  local scratch = dt.scratch
  scratch[0] = dt.encode(v, "t:fill")
  if self._contiguous then
    if capture.on then graph.refuse("t:fill()") end
    errors.check(C.iris_fill(self._ptr, scratch, dt.size, self._numel))
  else
    local ptr, memory = host_buffer(dt, self._numel)
    local x = scratch[0]
    for k = 0, self._numel - 1 do ptr[k] = x end
    finish_write(self, ptr, memory)
  end
  return self
end

local function same_shape(a, b)
  if a._ndim ~= b._ndim then return false end
  for d = 1, a._ndim do
    if a._shape[d] ~= b._shape[d] then return false end
  end
  return true
end
M.same_shape = same_shape

-- Copies `src` (a tensor of the same shape, any dtype, or a flat Lua array of numel values) into this
-- tensor. Different dtypes convert as a C cast does (floats to integers truncate toward zero).
function M.copy(self, src)
  check_live(self, "t:copy")
  check_writable(self, "t:copy")
  if type(src) == "table" and not is_tensor(src) then
    if #src ~= self._numel then
      errors.raise("invalid_argument", "t:copy: the table has %d values, the tensor %d elements", #src, self._numel)
    end
    M.write_values(self, src, "t:copy")
    return self
  end
  check_live(src, "t:copy", true)
  if not same_shape(self, src) then
    errors.raise("invalid_argument", "t:copy: shapes differ: this tensor is %s, the source %s", shape_text(self._shape),
      shape_text(src._shape))
  end
  local n = self._numel
  if n == 0 then return self end
  if self._dt == src._dt then
    if self._contiguous and src._contiguous then
      if capture.on then graph.refuse("t:copy()") end
      errors.check(C.iris_copy_device(self._ptr, src._ptr, n * self._dt.size))
    else
      local ptr, memory = host_elements(src)
      transfer(self, ptr, false)
      release_buffer(memory)
    end
    return self
  end
  local from, to = src._dt, self._dt
  local sptr, smemory = host_elements(src)
  local dptr, dmemory = host_destination(self)
  local number, kind = from.number, to.kind
  if to.name == "float16" or to.name == "bfloat16" then
    local encode = to.encode
    for k = 0, n - 1 do dptr[k] = encode(number(sptr[k]), "t:copy") end
  elseif to.kind == "bool" then
    for k = 0, n - 1 do dptr[k] = number(sptr[k]) ~= 0 and 1 or 0 end
  elseif kind == "int" and from.kind == "float" then
    for k = 0, n - 1 do
      local v = number(sptr[k])
      dptr[k] = v >= 0 and math.floor(v) or math.ceil(v)
    end
  else
    for k = 0, n - 1 do dptr[k] = number(sptr[k]) end
  end
  release_buffer(smemory)
  finish_write(self, dptr, dmemory)
  return self
end

-- Collective (allocates): a contiguous tensor with the same shape, dtype and elements.
function M.clone(self)
  check_live(self, "t:clone")
  local dims = self:shape()
  local out = tensor.allocate("t:clone()", dims, self._numel, self._dt, false)
  out:copy(self)
  -- every rank wrote its copy before any rank gets the tensor (docs/memory.md)
  if C.iris_world_size() > 1 then errors.check_waiting(C.iris_barrier, "t:clone()") end
  return out
end

function M.to_table(self)
  check_live(self, "t:to_table")
  local ptr, memory = host_elements(self)
  local decode = self._dt.decode
  local out = {}
  for k = 0, self._numel - 1 do out[k + 1] = decode(ptr[k]) end
  release_buffer(memory)
  return out
end

---------------------------------------------------------------------------------------------------
-- Reductions and comparisons (on the host; results are Lua values)

function M.sum(self)
  check_live(self, "t:sum")
  local ptr, memory = host_elements(self)
  local number = self._dt.number
  local s = 0
  for k = 0, self._numel - 1 do s = s + number(ptr[k]) end
  release_buffer(memory)
  return s
end

-- The mean of the elements, a Lua number (NaN for no elements, as torch's).
function M.mean(self)
  check_live(self, "t:mean")
  if self._dt.kind == "bool" then
    errors.raise("invalid_argument", "t:mean: a bool tensor has no mean (t:sum() counts its true elements)")
  end
  if self._numel == 0 then return 0 / 0 end
  return M.sum(self) / self._numel
end

-- The value of a tensor of one element (any shape: 0-d, {1}, {1, 1}).
function M.item(self)
  check_live(self, "t:item")
  if self._numel ~= 1 then
    errors.raise("invalid_argument", "t:item: the tensor has %d elements, item() reads a tensor of one (t:get(i, ...) "
      .. "reads one element of many)", self._numel)
  end
  local ptr, memory = host_elements(self)
  local value = self._dt.decode(ptr[0])
  release_buffer(memory)
  return value
end

local function extreme(t, what, want_max)
  check_live(t, what)
  if t._numel == 0 then errors.raise("invalid_argument", "%s: the tensor has no elements", what) end
  local ptr, memory = host_elements(t)
  local number = t._dt.number
  local best = number(ptr[0])
  for k = 0, t._numel - 1 do
    local v = number(ptr[k])
    if v ~= v then
      best = v -- NaN wins, as in torch
      break
    end
    if want_max then
      if v > best then best = v end
    elseif v < best then
      best = v
    end
  end
  release_buffer(memory)
  if t._dt.kind == "bool" then return best ~= 0 end
  return best
end

function M.min(self) return extreme(self, "t:min", false) end
function M.max(self) return extreme(self, "t:max", true) end

-- True when `other` has the same shape and every element is equal (NaN equals nothing).
function M.equal(self, other)
  check_live(self, "t:equal")
  check_live(other, "t:equal", true)
  if not same_shape(self, other) then return false end
  local a, amemory = host_elements(self)
  local b, bmemory = host_elements(other)
  local na, nb = self._dt.number, other._dt.number
  local equal = true
  for k = 0, self._numel - 1 do
    if na(a[k]) ~= nb(b[k]) then
      equal = false
      break
    end
  end
  release_buffer(amemory)
  release_buffer(bmemory)
  return equal
end

-- True when every |a - b| <= atol + rtol * |b| (torch's rule); shapes must match.
function M.allclose(self, other, rtol, atol)
  check_live(self, "t:allclose")
  check_live(other, "t:allclose", true)
  rtol = rtol or 1e-5
  atol = atol or 1e-8
  if type(rtol) ~= "number" or type(atol) ~= "number" then
    errors.raise("invalid_argument", "t:allclose(other [, rtol, atol]): rtol and atol are numbers")
  end
  if not same_shape(self, other) then
    errors.raise("invalid_argument", "t:allclose: shapes differ: %s and %s", shape_text(self._shape),
      shape_text(other._shape))
  end
  local a, amemory = host_elements(self)
  local b, bmemory = host_elements(other)
  local na, nb = self._dt.number, other._dt.number
  local close = true
  for k = 0, self._numel - 1 do
    local x, y = na(a[k]), nb(b[k])
    if x ~= y and not (math.abs(x - y) <= atol + rtol * math.abs(y)) then
      close = false
      break
    end
  end
  release_buffer(amemory)
  release_buffer(bmemory)
  return close
end

return M
