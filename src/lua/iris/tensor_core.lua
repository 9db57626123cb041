-- Tensors on the symmetric heap (docs/memory.md, "Tensor representation"): the representation, element
-- access, indexing, views and free. The rest of iris requires iris.tensor, which adds the operations on
-- whole tensors (iris.tensor_data) and the element-wise arithmetic (iris.tensor_math) to these methods;
-- those two build on this module, so this one requires neither (no require cycle).
--
-- A tensor is a userdata whose metatable is its own state table, so that #t, t[i] and t[i] = v work
-- (LuaJIT honours __len on userdata, not on tables). The state is also its own __index: t.dtype and
-- t._ptr read the state directly, and what the state lacks (methods, element indices) comes from the
-- state's metatable (state_index). Assigning anything but an element is an error. The state holds:
--   dtype       the dtype's name (public)
--   _dt         the dtype's info (iris.dtypes)
--   _shape      {d1, ..., dn};  _strides: element strides;  _ndim, _numel
--   _contiguous row-major without gaps
--   _offset     byte offset of the first element in the heap (the same on every rank)
--   _ptr        typed pointer to the first element in this rank's heap (a device address)
--   _alloc      uint64_t[2] {block offset, freed flag} shared by a tensor and all its views; its
--               finalizer releases the block (local, deferred: iris.heap's release protocol)
--   _view       made by view/narrow: keeps the base's block alive, cannot be freed itself
--   _fixed      iris's own memory (ctx:heap_bases()): never freed, read-only
--   _remote     a peer view of a rank on another node: its elements move through copies, never by dereference
-- Element access is 1-based. On a backend whose device memory the host can address (cpu) get/set and
-- bulk reads go straight through the pointer; elsewhere through backend copies.
local ffi = require "ffi"
local errors = require "iris.errors"
local trace = require "iris.trace"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

local Tensor = {} -- the methods
M.Tensor = Tensor

local uint8_ptr = ffi.typeof("uint8_t*")
local alloc_t = ffi.typeof("uint64_t[2]")
local NO_FIT = 0xffffffffffffffffULL

-- Whether the host dereferences device addresses itself (set when the context is created). Not while
-- ctx:capture(fn) runs: element access then takes the path that refuses (iris.graph).
local host_direct = false
local force_copies = false
local capturing = false
local capture = graph.state

function M.attach()
  host_direct = C.iris_host_addressable() == 1 and not force_copies and not capturing
end

-- iris.graph: a capture starts (true) or ends.
function M.capturing(on)
  capturing = on
  M.attach()
end

function M.host_direct() return host_direct end

-- Tests only: take the path GPU backends take (backend copies) on the cpu backend too.
function M.use_backend_copies(on)
  force_copies = on and true or false
  M.attach()
end

local function is_tensor(v)
  local state = getmetatable(v)
  return type(state) == "table" and rawget(state, "__tensor") == true
end
M.is_tensor = is_tensor

-- Where tensors were freed, for the message when one is used afterwards (weak: no leak).
local freed_where = setmetatable({}, { __mode = "k" })

-- Where `t`'s memory was freed ("x.lua:20"), or nil.
function M.freed_at(t) return freed_where[t._alloc] end

local function freed_error(t, what)
  local where = freed_where[t._alloc]
  where = where and (" at " .. where) or ""
  if t._view then
    errors.raise("invalid_argument", "%s: the tensor this view shares memory with was freed (t:free()%s); "
      .. "it cannot be used any more", what, where)
  end
  errors.raise("invalid_argument", "%s: this tensor was freed (t:free()%s); it cannot be used any more", what, where)
end

-- `t` must be a tensor that was not freed. `argument`: t is an argument, not the method's self (a
-- self that is no tensor usually means a call with a dot instead of a colon).
local function check_live(t, what, argument)
  if not is_tensor(t) then
    local hint = argument and "" or (" (call it as t:%s(...), with a colon)"):format(what:match("[:.](%w+)") or "method")
    errors.raise("invalid_argument", "%s: expected a tensor, got %s%s", what, t == nil and "nil" or ("a " .. type(t)), hint)
  end
  if t._alloc[1] ~= 0 then freed_error(t, what) end
end
M.check_live = check_live

local function check_writable(t, what)
  if t._fixed then errors.raise("invalid_argument", "%s: this tensor is iris's own memory and is read-only", what) end
end
M.check_writable = check_writable

-- Collection of a tensor (and every view of it) gone: the block goes back once every rank let go.
local function release_block(alloc)
  C.iris_heap_release(alloc[0])
end

---------------------------------------------------------------------------------------------------
-- Shapes

-- `shape` (an integer or a table of integers) -> dims table, numel. `what` names the caller.
function M.check_shape(shape, what)
  local dims = {}
  if type(shape) == "number" then
    dims[1] = shape
  elseif type(shape) == "table" and not is_tensor(shape) then
    for i = 1, #shape do dims[i] = shape[i] end
    for k in pairs(shape) do
      if type(k) ~= "number" or k < 1 or k > #shape or k % 1 ~= 0 then
        errors.raise("invalid_argument", "%s: a shape is a list of sizes such as {2, 3}, got a table with key %s", what,
          tostring(k))
      end
    end
  else
    errors.raise("invalid_argument", "%s: a shape is an integer or a table of integers such as {2, 3}, got a %s", what,
      type(shape))
  end
  local numel = 1
  for i = 1, #dims do
    local d = dims[i]
    if type(d) ~= "number" or d < 0 or d % 1 ~= 0 or d ~= d then
      errors.raise("invalid_argument", "%s: size %s of dimension %d is not a non-negative integer", what, tostring(d), i)
    end
    numel = numel * d
  end
  if numel >= 2 ^ 53 then errors.raise("invalid_argument", "%s: %s elements are too many", what, tostring(numel)) end
  return dims, numel
end

local function contiguous_strides(dims)
  local strides, s = {}, 1
  for d = #dims, 1, -1 do
    strides[d] = s
    s = s * dims[d]
  end
  return strides
end

-- Row-major without gaps (dimensions of size 1 may have any stride).
local function is_contiguous(dims, strides)
  local expected = 1
  for d = #dims, 1, -1 do
    if dims[d] ~= 1 and strides[d] ~= expected then return false end
    expected = expected * dims[d]
  end
  return true
end

local function shape_text(dims)
  return "{" .. table.concat(dims, ", ") .. "}"
end
M.shape_text = shape_text

---------------------------------------------------------------------------------------------------
-- Construction

local State = {} -- the metatable of every state: its __index (state_index) is set below
local tensor_newindex, tensor_len, tensor_text, no_arithmetic -- the metamethods, defined below
local shape_field -- t.shape, defined with t:shape()

local function make(dt, dims, strides, numel, offset, ptr, alloc)
  local state = setmetatable({
    __newindex = tensor_newindex, __len = tensor_len, __tostring = tensor_text, __tensor = true,
    __add = no_arithmetic, __sub = no_arithmetic, __mul = no_arithmetic, __div = no_arithmetic,
    dtype = dt.name, _dt = dt,
    _shape = dims, _strides = strides, _ndim = #dims, _numel = numel,
    _contiguous = is_contiguous(dims, strides),
    _offset = offset, _ptr = ptr, _alloc = alloc,
    _view = false, _fixed = false, _remote = false,
  }, State)
  state.__index = state
  local t = newproxy()
  debug.setmetatable(t, state)
  return t
end

local function heap_pointer(rank, offset, dt)
  local base = C.iris_heap_base(rank)
  if base == nil then errors.raise("invalid_argument", "call iris.init() first") end
  return ffi.cast(dt.ptr_t, ffi.cast(uint8_ptr, base) + offset)
end

local offset_out = ffi.new("uint64_t[1]")

-- Collective: a block of `bytes` at the same offset on every rank. A request that does not fit
-- collects garbage on every rank (together: the allocator state is the same everywhere, so every rank
-- learns "no fit" at once) and tries again; only then is it out of heap.
local function allocate_block(op, what, bytes, zero)
  local z = zero and 1 or 0
  if trace.state.on then trace.note_origin() end
  errors.check_waiting(C.iris_heap_allocate, op, what, bytes, z, 0, offset_out)
  if offset_out[0] == NO_FIT then
    -- One full cycle is enough: a tensor's block is released by the finalizer of its `_alloc` cdata,
    -- which runs within the cycle that finds it unreachable (cdata hold no references, so nothing
    -- waits for a second cycle).
    collectgarbage("collect")
    errors.check_waiting(C.iris_heap_allocate, op, what, bytes, z, 1, offset_out)
  end
  return tonumber(offset_out[0])
end

-- Collective: a new contiguous tensor. `op` names the call ("ctx:zeros()"); zero: fill with zeros.
function M.allocate(op, dims, numel, dt, zero)
  if C.iris_initialized() == 0 then errors.raise("invalid_argument", "%s: call iris.init() first", op) end
  if capture.on then
    graph.refuse(op, "it allocates on the symmetric heap, which every rank does together; allocate the tensors "
      .. "the graph uses before capturing it")
  end
  -- The dtype and shape travel with the size: ranks asking the same bytes as different tensors differ.
  local offset = allocate_block(op, dt.name .. " " .. shape_text(dims), numel * dt.size, zero)
  local alloc = ffi.gc(alloc_t(offset, 0), release_block)
  return make(dt, dims, contiguous_strides(dims), numel, offset, heap_pointer(C.iris_rank(), offset, dt), alloc)
end

-- A tensor over iris's own memory at `offset` (ctx:heap_bases()): never freed, read-only.
function M.fixed(offset, dims, dt)
  local _, numel = M.check_shape(dims, "iris")
  local t = make(dt, dims, contiguous_strides(dims), numel, offset, heap_pointer(C.iris_rank(), offset, dt),
    alloc_t(offset, 0))
  t._fixed = true
  return t
end

-- The same elements as `t` in rank `rank`'s heap (the same offset there), as this rank reaches them.
-- A rank on another node has no address here: its view's pointer is the tag the transport decodes
-- (docs/multinode.md), and its elements move through copies (the host proxy), never by dereference.
function M.peer_view(t, rank)
  check_live(t, "peer view")
  local v = make(t._dt, t._shape, t._strides, t._numel, t._offset, heap_pointer(rank, t._offset, t._dt), t._alloc)
  v._view = true
  if C.iris_node_of(rank) ~= C.iris_node_of(C.iris_rank()) then v._remote = true end
  return v
end

---------------------------------------------------------------------------------------------------
-- Element access (hot paths: no closures, no tables)

local function bad_index(t, what, d, i)
  if type(i) ~= "number" or i % 1 ~= 0 then
    errors.raise("invalid_argument", "%s: index %s for dimension %d is not an integer", what,
      type(i) == "number" and tostring(i) or ("(a " .. type(i) .. ")"), d)
  end
  errors.raise("invalid_argument", "%s: index %d is out of range for dimension %d of size %d (indices start at 1)",
    what, i, d, t._shape[d])
end

local function element_offset(t, what, d, i)
  if type(i) ~= "number" or i < 1 or i > t._shape[d] or i % 1 ~= 0 then bad_index(t, what, d, i) end
  return (i - 1) * t._strides[d]
end

local function count_error(t, what, given)
  errors.raise("invalid_argument", "%s: a %d-d tensor takes %d ind%s, got %d", what, t._ndim, t._ndim,
    t._ndim == 1 and "ex" or "ices", given)
end

-- Element offset from `n` indices given as varargs (any number of dimensions).
local function general_offset(t, what, n, ...)
  if n ~= t._ndim then count_error(t, what, n) end
  local e = 0
  for d = 1, n do e = e + element_offset(t, what, d, (select(d, ...))) end
  return e
end

local function read_element(t, e)
  local dt = t._dt
  if host_direct and not t._remote then return dt.decode(t._ptr[e]) end
  if capture.on then graph.refuse(nil, nil, "reading a tensor's element on the host") end
  local scratch = dt.scratch
  errors.check(C.iris_copy_to_host(scratch, t._ptr + e, dt.size))
  return dt.decode(scratch[0])
end

local function write_element(t, e, v, what)
  local dt = t._dt
  if host_direct and not t._remote then
    t._ptr[e] = dt.encode(v, what)
    return
  end
  if capture.on then graph.refuse(what) end
  local scratch = dt.scratch
  scratch[0] = dt.encode(v, what)
  errors.check(C.iris_copy_from_host(t._ptr + e, scratch, dt.size))
end

function Tensor:get(...)
  if not is_tensor(self) then check_live(self, "t:get") end
  if self._alloc[1] ~= 0 then freed_error(self, "t:get") end
  local n, nd = select("#", ...), self._ndim
  local e
  if n == 1 and nd == 1 then
    local i = ...
    e = element_offset(self, "t:get", 1, i)
  elseif n == 2 and nd == 2 then
    local i, j = ...
    e = element_offset(self, "t:get", 1, i) + element_offset(self, "t:get", 2, j)
  else
    e = general_offset(self, "t:get", n, ...)
  end
  return read_element(self, e)
end

function Tensor:set(...)
  if not is_tensor(self) then check_live(self, "t:set") end
  if self._alloc[1] ~= 0 then freed_error(self, "t:set") end
  if self._fixed then check_writable(self, "t:set") end
  local n, nd = select("#", ...), self._ndim
  local e, v
  if n == 2 and nd == 1 then
    local i
    i, v = ...
    e = element_offset(self, "t:set", 1, i)
  elseif n == 3 and nd == 2 then
    local i, j
    i, j, v = ...
    e = element_offset(self, "t:set", 1, i) + element_offset(self, "t:set", 2, j)
  else
    if n == 0 then errors.raise("invalid_argument", "t:set: give the indices, then the value") end
    e = general_offset(self, "t:set", n - 1, ...)
    v = select(n, ...)
  end
  write_element(self, e, v, "t:set")
  return self
end

---------------------------------------------------------------------------------------------------
-- Indexing as torch users write it: t[i] and t[i] = v on a 1-D tensor, t[{i, j}] on an n-D one
-- (1-based); fewer indices than dimensions give a view (t[i] of a matrix is its row i, as in torch).

local select_view -- (t, dim, index, what) -> the view without dimension dim; defined with the views

-- The element offset of a full list of indices. Unrolled up to three dimensions: a loop here would be
-- an inner loop of the script's loop over elements, which LuaJIT then leaves uncompiled.
local function offset_of(t, indices, n, what)
  if n == 1 then return element_offset(t, what, 1, indices[1]) end
  if n == 2 then return element_offset(t, what, 1, indices[1]) + element_offset(t, what, 2, indices[2]) end
  if n == 3 then
    return element_offset(t, what, 1, indices[1]) + element_offset(t, what, 2, indices[2])
      + element_offset(t, what, 3, indices[3])
  end
  local e = 0
  for d = 1, n do e = e + element_offset(t, what, d, indices[d]) end
  return e
end

-- The view or element that `indices` (a list, one per leading dimension) pick out of `t`.
local function pick(t, indices, n, what)
  if t._alloc[1] ~= 0 then freed_error(t, what) end
  if n > t._ndim or (n == 0 and t._ndim > 0) then count_error(t, what, n) end
  if n == t._ndim then return read_element(t, offset_of(t, indices, n, what)) end
  local v = t
  for d = 1, n do v = select_view(v, 1, indices[d], what) end
  return v
end

-- t[key] for what is not a field: a method, an element or a view, else nil (t.foo is nil as in Lua).
-- `t` is the state here: it holds every field the reads need.
function State.__index(t, key)
  local kind = type(key)
  if kind == "number" and t._ndim == 1 then
    if t._alloc[1] ~= 0 then freed_error(t, "t[i]") end
    return read_element(t, element_offset(t, "t[i]", 1, key))
  end
  if key == "shape" then return shape_field(t) end
  local method = Tensor[key]
  if method ~= nil then return method end
  if kind == "number" then
    if t._ndim == 0 then
      errors.raise("invalid_argument", "t[%s]: a 0-d tensor has no index (t:item() reads its value)", tostring(key))
    end
    return pick(t, { key }, 1, "t[i]")
  elseif kind == "table" and not is_tensor(key) then
    return pick(t, key, #key, "t[{...}]")
  end
  return nil
end

-- t[key] = value: an element, or every element of the view the key picks (a number fills it, a tensor
-- or a flat table of values is copied into it).
function tensor_newindex(t, key, value)
  local kind = type(key)
  local state = getmetatable(t)
  if kind == "number" and state._ndim == 1 and type(value) ~= "table" and not is_tensor(value) then
    if state._alloc[1] ~= 0 then freed_error(state, "t[i] = v") end
    if state._fixed then check_writable(state, "t[i] = v") end
    write_element(state, element_offset(state, "t[i] = v", 1, key), value, "t[i] = v")
    return
  end
  if kind == "string" and key:sub(1, 1) == "_" then -- iris's own fields (a view's _view flag)
    rawset(state, key, value)
    return
  end
  if kind ~= "number" and (kind ~= "table" or is_tensor(key)) then
    errors.raise("invalid_argument", "t.%s = ...: a tensor has no field '%s' to set; its elements are t[i] "
      .. "(1-D) and t[{i, j}] (n-D), 1-based", tostring(key), tostring(key))
  end
  local indices = kind == "number" and { key } or key
  local what = kind == "number" and "t[i] = v" or "t[{...}] = v"
  if state._fixed then check_writable(state, what) end
  local many = type(value) == "table" or is_tensor(value)
  if #indices == state._ndim then
    if many then
      errors.raise("invalid_argument", "%s: an element takes a number or boolean, got a %s", what,
        is_tensor(value) and "tensor" or type(value))
    end
    if state._alloc[1] ~= 0 then freed_error(state, what) end
    write_element(state, offset_of(state, indices, #indices, what), value, what)
    return
  end
  local view = pick(state, indices, #indices, what)
  if many then view:copy(value) else view:fill(value) end
end

-- #t: the size of the first dimension (torch's len(t)).
function tensor_len(t)
  local state = getmetatable(t)
  if state._ndim == 0 then
    errors.raise("invalid_argument", "#t: a 0-d tensor has no length (t:item() reads its value, t:numel() counts it)")
  end
  return state._shape[1]
end

function tensor_text(t) return require("iris.tensor_format").format(t) end

function no_arithmetic()
  errors.raise("invalid_argument", "tensors have no arithmetic operators (a new tensor is a collective allocation): "
    .. "t:add_(x), t:sub_(x), t:mul_(x), t:div_(x) work in place on the device; t:clone():add_(x) for a new one")
end

---------------------------------------------------------------------------------------------------
-- Shape and identity

function Tensor:shape()
  check_live(self, "t:shape")
  local out = {}
  for d = 1, self._ndim do out[d] = self._shape[d] end
  return out
end

-- t.shape, a field as in Torch: the sizes ({2, 3}: t.shape[1], #t.shape), which can also be called, so
-- that t:shape() (t.shape(t)) keeps returning a plain table.
local Shape = {
  __call = function(_, t) return Tensor.shape(t) end,
  __tostring = function(sizes) return shape_text(sizes) end,
}
function shape_field(state) -- (State.__index's `t` is the state, which holds the sizes)
  if state._alloc[1] ~= 0 then freed_error(state, "t.shape") end
  local sizes = {}
  for d = 1, state._ndim do sizes[d] = state._shape[d] end
  return setmetatable(sizes, Shape)
end

-- A dimension argument: 1-based, or negative from the last (-1). Returns it 1-based.
local function dimension(t, dim, what)
  local nd = t._ndim
  if type(dim) ~= "number" or dim % 1 ~= 0 or dim == 0 or dim > nd or dim < -nd then
    errors.raise("invalid_argument", "%s: dim %s is not a dimension of this %d-d tensor (1 to %d, or -1 to -%d)", what,
      tostring(dim), nd, nd, nd)
  end
  return dim > 0 and dim or nd + 1 + dim
end

-- A view of t with `dims` and `strides`, starting `skip` elements in.
local function view_of(t, dims, strides, skip)
  local numel = 1
  for d = 1, #dims do numel = numel * dims[d] end
  local v = make(t._dt, dims, strides, numel, t._offset + skip * t._dt.size, t._ptr + skip, t._alloc)
  v._view = true
  v._fixed = t._fixed
  v._remote = t._remote
  return v
end

-- t:size() is t:shape(); t:size(dim) the size of one dimension (negative counts from the last).
function Tensor:size(dim)
  if dim == nil then return self:shape() end
  check_live(self, "t:size")
  return self._shape[dimension(self, dim, "t:size")]
end

function Tensor:stride()
  check_live(self, "t:stride")
  local out = {}
  for d = 1, self._ndim do out[d] = self._strides[d] end
  return out
end

-- Facts about the shape stay readable after t:free() (no memory is touched).
local function check_tensor(t, what)
  if not is_tensor(t) then check_live(t, what) end
end

function Tensor:numel()
  check_tensor(self, "t:numel")
  return self._numel
end

function Tensor:dim()
  check_tensor(self, "t:dim")
  return self._ndim
end

function Tensor:element_size()
  check_tensor(self, "t:element_size")
  return self._dt.size
end

function Tensor:nbytes()
  check_tensor(self, "t:nbytes")
  return self._numel * self._dt.size
end

function Tensor:is_contiguous()
  check_tensor(self, "t:is_contiguous")
  return self._contiguous
end

function Tensor:offset()
  check_live(self, "t:offset")
  return self._offset
end

-- The device address of the first element (what a kernel receives for this tensor).
function Tensor:data_ptr()
  check_live(self, "t:data_ptr")
  return ffi.cast("void*", self._ptr)
end

---------------------------------------------------------------------------------------------------
-- Views

-- The shape a t:view or t:reshape call gives, as torch takes it: a table ({2, 3}), one integer, or the
-- sizes as separate arguments (2, 3).
local function shape_argument(what, ...)
  local count, first = select("#", ...), ...
  if count == 0 then errors.raise("invalid_argument", "%s(shape): needs a shape, such as {2, 3} or 2, 3", what) end
  if count == 1 then return first end
  if type(first) == "table" then
    errors.raise("invalid_argument", "%s: a shape is one table such as {2, 3} or sizes such as 2, 3, got %d arguments "
      .. "starting with a table", what, count)
  end
  return { ... }
end

-- The dims `shape` gives `numel` elements, one size of which may be -1 (inferred); `what` names the
-- method the user called in errors.
local function resolve_shape(shape, numel, what)
  local dims = {}
  local inferred
  if shape == -1 then shape = { -1 } end -- t:view(-1): flat, as torch's
  if type(shape) == "table" then
    for i = 1, #shape do
      if shape[i] == -1 then
        if inferred then errors.raise("invalid_argument", "%s: only one size may be -1, got %s", what, shape_text(shape)) end
        inferred = i
        dims[i] = 1
      else
        dims[i] = shape[i]
      end
    end
  else
    dims = shape
  end
  local checked, count = M.check_shape(dims, what)
  if inferred then
    if count == 0 or numel % count ~= 0 then
      errors.raise("invalid_argument", "%s: %d elements cannot take the shape %s", what, numel, shape_text(shape))
    end
    checked[inferred] = numel / count
    count = numel
  end
  if count ~= numel then
    errors.raise("invalid_argument", "%s: shape %s has %d elements, the tensor has %d", what, shape_text(checked), count,
      numel)
  end
  return checked
end

-- A view of contiguous `t` with `dims` (resolve_shape's).
local function contiguous_view(t, dims) return view_of(t, dims, contiguous_strides(dims), 0) end

function Tensor:view(...)
  check_live(self, "t:view")
  local shape = shape_argument("t:view", ...)
  if not self._contiguous then
    errors.raise("invalid_argument", "t:view: this tensor is not contiguous (a narrow or transpose of another): "
      .. "t:reshape(shape) copies it (a collective allocation), as does t:clone():view(shape)")
  end
  return contiguous_view(self, resolve_shape(shape, self._numel, "t:view"))
end

function Tensor:narrow(dim, start, length)
  check_live(self, "t:narrow")
  local nd = self._ndim
  if type(dim) ~= "number" or dim % 1 ~= 0 or dim < 1 or dim > nd then
    errors.raise("invalid_argument", "t:narrow: dim %s is not a dimension of this %d-d tensor (1 to %d)", tostring(dim),
      nd, nd)
  end
  local size = self._shape[dim]
  if type(start) ~= "number" or start % 1 ~= 0 or start < 1 or start > size + 1 then
    errors.raise("invalid_argument", "t:narrow: start %s is outside dimension %d of size %d (starts are 1-based)",
      tostring(start), dim, size)
  end
  if type(length) ~= "number" or length % 1 ~= 0 or length < 0 or start - 1 + length > size then
    errors.raise("invalid_argument", "t:narrow: length %s from start %d does not fit dimension %d of size %d",
      tostring(length), start, dim, size)
  end
  local dims, strides = {}, {}
  for d = 1, nd do
    dims[d] = self._shape[d]
    strides[d] = self._strides[d]
  end
  dims[dim] = length
  return view_of(self, dims, strides, (start - 1) * strides[dim])
end

-- The view without dimension `dim`, at `index` along it (t[i] of a matrix is its row i).
function select_view(t, dim, index, what)
  local skip = element_offset(t, what, dim, index)
  local dims, strides = {}, {}
  for d = 1, t._ndim do
    if d ~= dim then
      dims[#dims + 1] = t._shape[d]
      strides[#strides + 1] = t._strides[d]
    end
  end
  return view_of(t, dims, strides, skip)
end

function Tensor:select(dim, index)
  check_live(self, "t:select")
  return select_view(self, dimension(self, dim, "t:select"), index, "t:select")
end

-- The view with dimensions a and b swapped (no copy: strides swap).
function Tensor:transpose(a, b)
  check_live(self, "t:transpose")
  a, b = dimension(self, a, "t:transpose"), dimension(self, b, "t:transpose")
  local dims, strides = {}, {}
  for d = 1, self._ndim do
    dims[d], strides[d] = self._shape[d], self._strides[d]
  end
  dims[a], dims[b] = dims[b], dims[a]
  strides[a], strides[b] = strides[b], strides[a]
  return view_of(self, dims, strides, 0)
end

-- A matrix transposed (torch's t.t(): tensors of 0 or 1 dimension come back as a view of themselves).
function Tensor:t()
  check_live(self, "t:t")
  if self._ndim > 2 then
    errors.raise("invalid_argument", "t:t: transposes a matrix, this tensor has %d dimensions (t:transpose(a, b) swaps "
      .. "any two)", self._ndim)
  end
  if self._ndim < 2 then return view_of(self, self:shape(), self:stride(), 0) end
  return self:transpose(1, 2)
end

-- A view with `shape` when the tensor is contiguous; else a contiguous copy with that shape (a
-- collective allocation, as torch's reshape copies when it must).
function Tensor:reshape(...)
  check_live(self, "t:reshape")
  local shape = shape_argument("t:reshape", ...)
  local dims = resolve_shape(shape, self._numel, "t:reshape") -- before a copy: a wrong shape copies nothing
  return contiguous_view(self._contiguous and self or self:clone(), dims)
end


-- t:peer(rank): the same elements in rank `rank`'s heap (0-based; the same offset there), as this rank
-- reaches them. Host-driven copies between ranks go through it: `t:peer(r):copy(t)` puts this rank's
-- elements into rank r's copy (the copy engine on GPUs), `t:copy(t:peer(r))` gets them.
function Tensor:peer(rank)
  check_live(self, "t:peer")
  local world = C.iris_world_size()
  if type(rank) ~= "number" or rank % 1 ~= 0 or rank < 0 or rank >= world then
    errors.raise("invalid_argument", "t:peer(rank): rank is 0-based, from 0 to %d, got %s", world - 1, tostring(rank))
  end
  local v = M.peer_view(self, rank)
  v._fixed = self._fixed
  return v
end

---------------------------------------------------------------------------------------------------
-- Whole-tensor operations

function Tensor:free()
  check_live(self, "t:free")
  if self._fixed then errors.raise("invalid_argument", "t:free: this tensor is iris's own memory; it is never freed") end
  if self._view then
    errors.raise("invalid_argument", "t:free: this tensor is a view (t:view or t:narrow) sharing memory with another; "
      .. "free that tensor instead")
  end
  local alloc = self._alloc
  ffi.gc(alloc, nil)
  alloc[1] = 1
  freed_where[alloc] = errors.user_line()
  errors.check(C.iris_heap_release(alloc[0]))
end

function Tensor:is_freed()
  check_tensor(self, "t:is_freed")
  return self._alloc[1] ~= 0
end

return M
