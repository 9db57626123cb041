-- Element-wise arithmetic in place, on the device: t:add_(x), t:sub_(x), t:mul_(x), t:div_(x), with x
-- a number or a tensor of the same dtype whose shape broadcasts to t's (torch's rules: sizes aligned
-- from the last dimension, each 1 or equal). Methods of a tensor (iris.tensor attaches them). They
-- allocate nothing and are not collective: each rank changes its own copy, asynchronously like a
-- launch (kernels/tensor/elementwise.hip, compiled once per process through iris.kernel.builtin).
local errors = require "iris.errors"
local tensor = require "iris.tensor_core"
local kernel = require "iris.kernel"

local M = {}

local OPERATION = { add_ = 0, sub_ = 1, mul_ = 2, div_ = 3 } -- as elementwise.hip numbers them
local MAX_DIMS = 4 -- what the kernel indexes after merging

local function module() return kernel.builtin("tensor/elementwise") end

-- t's sizes and strides with `other`'s strides beside them (0 where other broadcasts), size-1
-- dimensions dropped and neighbours merged where both tensors run on contiguously.
local function geometry(t, other, what)
  local nd, sizes, dst, src = t._ndim, {}, {}, {}
  local shift = other and nd - other._ndim or 0
  if other and shift < 0 then
    errors.raise("invalid_argument", "%s: the other tensor has %d dimensions, this one %d: it must broadcast to this "
      .. "one's shape %s", what, other._ndim, nd, tensor.shape_text(t._shape))
  end
  for d = 1, nd do
    local size, stride = t._shape[d], 0
    if other and d > shift then
      local their = other._shape[d - shift]
      if their == size then
        stride = other._strides[d - shift]
      elseif their ~= 1 then
        errors.raise("invalid_argument", "%s: shape %s does not broadcast to this tensor's %s (each size must be 1 or "
          .. "equal, aligned from the last dimension)", what, tensor.shape_text(other._shape), tensor.shape_text(t._shape))
      end
    end
    if size ~= 1 then
      local k = #sizes
      if k > 0 and dst[k] == t._strides[d] * size and src[k] == stride * size then
        sizes[k] = sizes[k] * size
        dst[k], src[k] = t._strides[d], stride
      else
        sizes[k + 1], dst[k + 1], src[k + 1] = size, t._strides[d], stride
      end
    end
  end
  if #sizes > MAX_DIMS then
    errors.raise("invalid_argument", "%s: this view has %d dimensions that do not merge (at most %d): t:clone() it, "
      .. "or work on narrower views", what, #sizes, MAX_DIMS)
  end
  while #sizes < MAX_DIMS do -- padded in front: the outermost dimensions of size 1
    table.insert(sizes, 1, 1)
    table.insert(dst, 1, 0)
    table.insert(src, 1, 0)
  end
  return sizes, dst, src
end

-- The scalar as an element of `dt`, checked in the user's terms; an unsigned tensor takes a negative
-- addend as the opposite operation (t:add_(-1) on uint8 subtracts 1, wrapping as torch's does).
local function scalar_operand(t, name, value, what)
  local dt = t._dt
  if dt.kind == "int" and dt.min == 0 and value < 0 and (name == "add_" or name == "sub_") then
    name, value = name == "add_" and "sub_" or "add_", -value
  end
  dt.encode(value, what)
  return name, value
end

local function apply(t, name, x)
  local what = "t:" .. name
  tensor.check_live(t, what)
  tensor.check_writable(t, what)
  local dt = t._dt
  if dt.kind == "bool" then
    errors.raise("invalid_argument", "%s: a bool tensor has no arithmetic (t:copy() converts it to a number dtype)", what)
  end
  if name == "div_" and dt.kind == "int" then
    errors.raise("invalid_argument", "%s: true division of an %s tensor would not be whole numbers; divide a float "
      .. "tensor (as torch refuses it in place)", what, dt.name)
  end
  local other, scalar = nil, 0
  if type(x) == "number" then
    name, scalar = scalar_operand(t, name, x, what)
  elseif tensor.is_tensor(x) then
    tensor.check_live(x, what, true)
    if x.dtype ~= t.dtype then
      errors.raise("invalid_argument", "%s: the other tensor is %s, this one %s (in place, both must be the same dtype: "
        .. "convert with ctx:empty_like(x, '%s'):copy(x))", what, x.dtype, t.dtype, t.dtype)
    end
    other = x
  else
    errors.raise("invalid_argument", "%s(x): x is a number or a tensor, got %s", what, x == nil and "nil" or ("a " .. type(x)))
  end
  if t._numel == 0 then return t end
  local sizes, dst, src = geometry(t, other, what)
  local n = t._numel
  local cfg = { grid = math.min(math.floor((n + 255) / 256), 1024), block = 256 }
  module()["elementwise_" .. dt.name]:launch(cfg, t, other or t, scalar, other == nil, OPERATION[name], n,
    sizes[2], sizes[3], sizes[4], dst[1], dst[2], dst[3], dst[4], src[1], src[2], src[3], src[4])
  return t
end

function M.add_(self, x) return apply(self, "add_", x) end
function M.sub_(self, x) return apply(self, "sub_", x) end
function M.mul_(self, x) return apply(self, "mul_", x) end
function M.div_(self, x) return apply(self, "div_", x) end

return M
