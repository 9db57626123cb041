-- iris.init and the context (docs/memory.md).
--
-- The context is one table per process: read-only fields rank, world_size, device, backend, and the
-- methods attached at the end of this file, in one block: those defined here and those other modules
-- define (iris.creation: ctx:zeros() and friends; iris.broadcast: ctx:broadcast(); iris.kernel:
-- ctx:device_barrier(); iris.graph: ctx:capture()), and the fields ccl (iris.ccl's collectives) and
-- ops (iris.ops's fused matrix multiplications). Every method is checked there for its receiver, so
-- none checks it itself.
local ffi = require "ffi"
local errors = require "iris.errors"
local dtypes = require "iris.dtypes"
local tensor = require "iris.tensor"
local creation, broadcast, kernel = require "iris.creation", require "iris.broadcast", require "iris.kernel"
local trace = require "iris.trace"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

local Context = {}
M.Context = Context

-- The running context's fields (rank, world_size, device, ...; there is one context per process). The
-- context reads them through its metatable, so assigning one is an error instead of a silent change
-- of what kernels and collectives are told: `ctx.rank = 1 - ctx.rank` would otherwise pass the wrong
-- rank to every later launch. Methods are found one level further, in Context.
local fields = setmetatable({}, { __index = Context })
Context.__index = fields

function Context.__newindex(self, key, value)
  local current = fields[key]
  if current ~= nil then
    if type(current) == "function" then
      errors.raise("invalid_argument", "ctx.%s is a method of the context and cannot be replaced", tostring(key))
    end
    errors.raise("invalid_argument", "ctx.%s is read-only: it describes the running job (keep a changed value in a "
      .. "variable of your own: local %s = ctx.%s)", tostring(key), tostring(key), tostring(key))
  end
  rawset(self, key, value)
end

local the_context

M.INIT_OPTIONS = { "backend", "heap_size", "node_size" }

-- "256 MiB": sizes as the C++ side words them in its messages.
local function human(bytes) return ffi.string(C.iris_human_bytes(bytes)) end
M.human_bytes = human

local size_out = ffi.new("uint64_t[1]")

local function heap_bytes_of(value)
  if type(value) == "number" then
    if value % 1 ~= 0 or value <= 0 then
      errors.raise("invalid_argument", "iris.init: heap_size %s is not a positive whole number of bytes", tostring(value))
    end
    return value
  end
  if type(value) == "string" then
    errors.check(C.iris_parse_byte_size(value, "iris.init: heap_size", size_out))
    if size_out[0] == 0 then errors.raise("invalid_argument", "iris.init: heap_size must be more than 0 bytes") end
    return tonumber(size_out[0])
  end
  errors.raise("invalid_argument", "iris.init: heap_size is bytes or a string such as \"512MiB\", got a %s", type(value))
end

local function new_context()
  tensor.attach()
  fields.rank = C.iris_rank()
  fields.world_size = C.iris_world_size()
  fields.device = C.iris_device_ordinal()
  fields.backend = ffi.string(C.iris_backend_name())
  fields.device_name = ffi.string(C.iris_device_name())
  fields.heap_size = tonumber(C.iris_heap_size())
  -- Where this rank is among the nodes (docs/multinode.md): a node is the ranks of one host, or of
  -- one simulated node (IRIS_NODE_SIZE, iris.init{node_size=}).
  fields.node = C.iris_node_of(fields.rank)
  fields.nodes = C.iris_nodes()
  fields.local_rank = C.iris_local_rank_of(fields.rank)
  local local_size = 0
  for r = 0, fields.world_size - 1 do
    if C.iris_node_of(r) == fields.node then local_size = local_size + 1 end
  end
  fields.local_size = local_size
  local ctx = setmetatable({}, Context)
  local ccl = require "iris.ccl"
  fields.ccl = ccl.new(ctx)
  fields.ops = require("iris.ops").new(ctx)
  ccl.reserve_staging(ctx) -- collective, like iris.init itself
  return ctx
end

-- A second call returns the same context. It is an error only when the call asks for what the
-- running context cannot give: another backend, or a larger heap (the heap cannot grow while tensors
-- live in it). A smaller heap_size is satisfied by the larger heap already there, so test files that
-- each ask for what they need can share one process (`iris-lua test dir`).
local function check_second_init(ctx, backend, heap_bytes)
  if backend ~= nil and backend ~= "auto" and backend ~= ctx.backend then
    errors.raise("invalid_argument", "iris.init: already initialized on backend '%s'; a second iris.init() returns the "
      .. "same context and cannot switch to backend '%s'", ctx.backend, backend)
  end
  if heap_bytes > ctx.heap_size then
    errors.raise("invalid_argument", "iris.init: already initialized with a heap of %s per rank; a second iris.init() "
      .. "returns the same context and cannot grow the heap to %s (ask for the largest heap in the first call)",
      human(ctx.heap_size), human(heap_bytes))
  end
end

-- The context, once iris.init made it (else nil): for help() and the reference's checks.
function M.current() return the_context end

-- The end of a script (the host calls it): waits for this rank's device work through the Lua side, so
-- that a fault found only now (a collective mismatch of the last calls) is worded and placed like one
-- found by a call of the script (errors.check), instead of bare at the end of the job.
function M.synchronize_at_end()
  if the_context then errors.check_waiting(C.iris_synchronize) end
end

-- iris.manual_seed(seed [, {shared = true}]): ctx:manual_seed on the context, also before iris.init
-- (the seed is checked now and set when the context is made).
local pending_seed -- { _seed, _seed_shared, _draws } set before iris.init

function M.manual_seed(seed, options)
  if the_context then return creation.manual_seed(the_context, seed, options, "iris.manual_seed") end
  local pending = {}
  creation.manual_seed(pending, seed, options, "iris.manual_seed")
  pending_seed = pending
end

-- iris.init([options])
function M.init(options)
  if options == nil then options = {} end
  if type(options) ~= "table" then
    errors.raise("invalid_argument", "iris.init takes a table of options such as {heap_size = \"1GiB\"}, got a %s",
      type(options))
  end
  errors.check_keys(options, M.INIT_OPTIONS, "iris.init")
  local backend = options.backend
  if backend ~= nil and type(backend) ~= "string" then
    errors.raise("invalid_argument", "iris.init: backend is a name (%s), got a %s", ffi.string(C.iris_backend_names()),
      type(backend))
  end
  local heap_bytes = options.heap_size ~= nil and heap_bytes_of(options.heap_size) or 0
  local node_size = options.node_size
  if node_size ~= nil and (type(node_size) ~= "number" or node_size % 1 ~= 0 or node_size < 1 or node_size > 2^20) then
    errors.raise("invalid_argument", "iris.init: node_size is a whole number of ranks per simulated node, 1 or more, "
      .. "got %s", tostring(node_size))
  end
  if the_context == nil and C.iris_initialized() == 0 then
    if trace.state.on then trace.note_origin() end
    errors.check_waiting(C.iris_init, backend or "", heap_bytes, node_size or 0)
    the_context = new_context()
    if pending_seed then
      the_context._seed, the_context._seed_shared, the_context._draws =
        pending_seed._seed, pending_seed._seed_shared, pending_seed._draws
      pending_seed = nil
    end
    return the_context
  end
  the_context = the_context or new_context()
  check_second_init(the_context, backend, heap_bytes)
  if node_size ~= nil then
    for r = 0, the_context.world_size - 1 do
      if C.iris_node_of(r) ~= math.floor(r / node_size) then
        errors.raise("invalid_argument", "iris.init: already initialized with %d node%s; a second iris.init() returns "
          .. "the same context and cannot regroup the ranks into nodes of %d", the_context.nodes,
          the_context.nodes == 1 and "" or "s", node_size)
      end
    end
  end
  return the_context
end

local function check_context(self, what)
  if getmetatable(self) ~= Context then
    errors.raise("invalid_argument", "%s: call it on the context with a colon: ctx:%s(...)", what,
      what:match("ctx:([%w_]+)") or "method")
  end
end

---------------------------------------------------------------------------------------------------
-- Methods defined here

local function get_rank(self) return self.rank end
local function get_num_ranks(self) return self.world_size end

-- Finishes this rank's device work, then waits for every rank.
local function barrier(self)
  if graph.state.on then graph.refuse("ctx:barrier()") end
  if trace.state.on then trace.note_origin() end
  errors.check_waiting(C.iris_barrier, "ctx:barrier()")
end

local function synchronize(self)
  if graph.state.on then graph.refuse("ctx:synchronize()") end
  if trace.state.on then trace.note_origin() end
  errors.check_waiting(C.iris_synchronize)
end

-- uint64 tensor of world_size entries over the heap bases table at heap offset 0: where this rank sees
-- every rank's heap. Read-only; the same tensor every call.
local function heap_bases(self)
  if not self._heap_bases then self._heap_bases = tensor.fixed(0, { self.world_size }, dtypes.info.uint64) end
  return self._heap_bases
end

local count_out = ffi.new("uint32_t[1]")

-- The device's multiprocessors (Iris's get_cu_count): SMs, CUs, or the cpu backend's threads per rank.
local function get_cu_count(self)
  errors.check(C.iris_device_multiprocessors(count_out))
  return count_out[0]
end

local stats_out = ffi.new("uint64_t[6]")

-- The allocator's state (the same on every rank after each allocation), in bytes and blocks.
local function memory_stats(self)
  local s = stats_out
  errors.check(C.iris_heap_stats(s, s + 1, s + 2, s + 3, s + 4, s + 5))
  return {
    heap_size = self.heap_size,
    free = tonumber(s[0]),
    largest_free = tonumber(s[1]),
    allocated = tonumber(s[2]),
    allocated_blocks = tonumber(s[3]),
    pending_releases = tonumber(s[4]), -- released here since the last allocation
    awaiting_other_ranks = tonumber(s[5]), -- released by some ranks, not yet by all
  }
end

-- Logging: "[iris r/N] level: message" on stderr, from IRIS_LOG_LEVEL up. ctx:info(fmt, ...) formats
-- like string.format when more arguments follow.
local function logger(level)
  return function(self, message, ...)
    if C.iris_log_enabled(level) == 0 then return end
    local text
    if select("#", ...) > 0 then
      text = tostring(message):format(...)
    else
      text = tostring(message)
    end
    C.iris_log(level, text)
  end
end

---------------------------------------------------------------------------------------------------
-- The context's methods, all of them

local METHODS = {
  -- this file
  get_rank = get_rank, get_num_ranks = get_num_ranks, barrier = barrier, synchronize = synchronize,
  heap_bases = heap_bases, memory_stats = memory_stats, get_cu_count = get_cu_count,
  debug = logger(0), info = logger(1), warning = logger(2), error = logger(3),
  -- iris.creation: tensors on the symmetric heap
  zeros = creation.zeros, empty = creation.empty, ones = creation.ones, full = creation.full,
  zeros_like = creation.zeros_like, empty_like = creation.empty_like, ones_like = creation.ones_like,
  full_like = creation.full_like, arange = creation.arange, linspace = creation.linspace,
  tensor = creation.tensor, manual_seed = creation.manual_seed, rand = creation.rand, randn = creation.randn,
  randint = creation.randint,
  -- iris.broadcast
  broadcast = broadcast.broadcast,
  -- iris.kernel
  device_barrier = kernel.device_barrier, tensor_map = kernel.tensor_map,
  -- iris.graph
  capture = graph.capture,
}

for name, fn in pairs(METHODS) do
  local what = "ctx:" .. name
  Context[name] = function(self, ...)
    check_context(self, what)
    -- Not a tail call, so that a traceback from inside `fn` reads as it would without this frame.
    return select(1, fn(self, ...))
  end
end

Context.__tostring = function(self)
  return ("iris context: rank %d of %d, backend %s (%s), heap %s per rank"):format(self.rank, self.world_size,
    self.backend, self.device_name, human(self.heap_size))
end

return M
