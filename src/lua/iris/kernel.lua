-- iris.compile, iris.compile_file, kernels and their launches, iris.bench (docs/kernels.md: the Lua
-- side and the pipeline behind it).
--
-- Checking and marshalling arguments is policy, so it lives here. Each kernel gets a launch function
-- generated for its signature (loadstring): fixed argument slots allocated once, one check per
-- parameter, one FFI call. A launch from a JIT-compiled loop costs the FFI call and the driver's launch.
local ffi = require "ffi"
local bit = require "bit"
require "iris.cdef"
local errors = require "iris.errors"
local trace = require "iris.trace"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

-- How a parameter is passed (iris_param_info.kind): the C API's IRIS_PARAM_* (src/capi/capi_kernels.h).
local PARAM_POINTER, PARAM_INTEGER, PARAM_FLOAT, PARAM_BOOL, PARAM_CONTEXT, PARAM_FLOAT16, PARAM_BFLOAT16 =
  C.IRIS_PARAM_POINTER, C.IRIS_PARAM_INTEGER, C.IRIS_PARAM_FLOAT, C.IRIS_PARAM_BOOL, C.IRIS_PARAM_CONTEXT,
  C.IRIS_PARAM_FLOAT16, C.IRIS_PARAM_BFLOAT16
local PARAM_TENSOR_MAP = C.IRIS_PARAM_TENSOR_MAP
local tensor_map_t = ffi.typeof("iris_tensor_map")

-- ---- values as messages name them ---------------------------------------------------------------------

-- iris.tensor_core's is_tensor, looked up when first needed (the unit tests put a stand-in in its place).
local tensor_is_tensor

local function is_tensor(v)
  if not tensor_is_tensor then tensor_is_tensor = require("iris.tensor_core").is_tensor end
  return tensor_is_tensor(v)
end

-- "an int32 tensor", "a float32 tensor", "a uint8 tensor"
local function a_tensor_of(dtype)
  return (dtype:sub(1, 1) == "i" and "an %s tensor" or "a %s tensor"):format(dtype)
end

local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")

-- A bad argument's words (errors.describe), a tensor map's included.
local function describe(v)
  if type(v) == "cdata" and ffi.istype(tensor_map_t, v) then return "a tensor map" end
  return errors.describe(v)
end

-- An integer parameter's exact range. Lua numbers are doubles and the largest int64_t and uint64_t
-- (2^63 - 1, 2^64 - 1) are not, so numbers are checked against the first value above the range, which
-- every type's is (2^63, 2^64, 2^31, ...); exact values beyond 2^53 come as int64_t or uint64_t cdata
-- (2^62 + 1 is 2LL^62 + 1, the largest uint64_t 0xffffffffffffffffULL), checked as 64-bit integers.
local function integer_range(param)
  local bits = 8 * ffi.sizeof(param.ctype)
  local signed = param.min < 0
  local max = bits == 64 and not signed and 0xffffffffffffffffULL or bit.lshift(1ULL, signed and bits - 1 or bits) - 1
  return {
    signed = signed, min = param.min, above = signed and 2 ^ (bits - 1) or 2 ^ bits,
    min_exact = signed and -ffi.cast(int64_t, max) - 1 or 0LL, max_exact = max,
  }
end

local function exact_text(v) return (tostring(v):gsub("U?LL$", "")) end

-- Whether `v` is an int64_t or uint64_t cdata within `range`.
local function fits_integer_cdata(v, range)
  if ffi.istype(uint64_t, v) then return v <= range.max_exact end
  if not ffi.istype(int64_t, v) then return false end
  if v < 0 then return range.signed and v >= range.min_exact end
  return ffi.cast(uint64_t, v) <= range.max_exact
end

local function expected(param)
  local k = param.kind
  if k == PARAM_POINTER then
    return param.dtype == "" and "a tensor" or a_tensor_of(param.dtype)
  elseif k == PARAM_INTEGER then
    return ("an integer in [%s, %s]"):format(exact_text(param.range.min_exact), exact_text(param.range.max_exact))
  elseif k == PARAM_BOOL then
    return "a boolean"
  elseif k == PARAM_CONTEXT then
    return "the iris context (ctx)"
  elseif k == PARAM_TENSOR_MAP then
    return "a tensor map (ctx:tensor_map(t, box))"
  end
  return "a number"
end

local function signature_text(kernel)
  local parts = {}
  for i, p in ipairs(kernel.params) do parts[i] = p.type .. " " .. p.name end
  return table.concat(parts, ", ")
end

-- ---- launch configuration --------------------------------------------------------------------------------

-- Reads cfg[field] (an integer or {x, y, z}) into dims[base .. base + 2].
local function read_dim(kernel, cfg, field, limits, dims, base)
  local v = cfg[field]
  if type(v) == "number" then
    if v % 1 ~= 0 or v < 1 or v > limits[1] then
      errors.raise("invalid_argument", "%s:launch: cfg.%s must be an integer from 1 to %d or {x, y, z}, got %s",
        kernel.name, field, limits[1], describe(v))
    end
    dims[base], dims[base + 1], dims[base + 2] = v, 1, 1
  elseif type(v) == "table" then
    for i = 1, 3 do
      local d = v[i] or v[i == 1 and "x" or i == 2 and "y" or "z"] or (i > 1 and 1 or nil)
      if type(d) ~= "number" or d % 1 ~= 0 or d < 1 or d > limits[i] then
        errors.raise("invalid_argument", "%s:launch: cfg.%s[%d] must be an integer from 1 to %d, got %s",
          kernel.name, field, i, limits[i], describe(d))
      end
      dims[base + i - 1] = d
    end
  else
    errors.raise("invalid_argument", "%s:launch: cfg.%s must be an integer or {x, y, z}, got %s", kernel.name,
      field, describe(v))
  end
end

-- The keys a launch cfg may have, checked at every launch by errors.check_keys (which walks up to three
-- keys without a loop, so the script's launch loop stays compiled).
M.LAUNCH_KEYS = { "grid", "block", "shared" }

-- Reads cfg.grid and cfg.block into dims[0..5]; returns cfg.shared (dynamic shared bytes). Allocates
-- nothing: it runs at every launch.
local function read_config(kernel, cfg, dims)
  if type(cfg) ~= "table" then
    errors.raise("invalid_argument", "%s:launch(cfg, ...): cfg must be a table {grid = ..., block = ... [, shared = bytes]}, got %s",
      kernel.name, describe(cfg))
  end
  errors.check_keys(cfg, M.LAUNCH_KEYS, kernel._launch_what, "cfg key")
  local limits = kernel.limits
  read_dim(kernel, cfg, "grid", limits.grid, dims, 0)
  read_dim(kernel, cfg, "block", limits.block, dims, 3)
  local threads = dims[3] * dims[4] * dims[5]
  if threads > limits.threads then
    errors.raise("invalid_argument", "%s:launch: a block of %d x %d x %d = %d threads; at most %d", kernel.name,
      dims[3], dims[4], dims[5], threads, limits.threads)
  end
  local shared = cfg.shared
  if shared == nil then return 0 end
  if type(shared) ~= "number" or shared % 1 ~= 0 or shared < 0 then
    errors.raise("invalid_argument", "%s:launch: cfg.shared (dynamic shared memory) must be a byte count >= 0, got %s",
      kernel.name, describe(shared))
  end
  return shared
end

-- ---- the generated launch functions ---------------------------------------------------------------------

local function bad_argument(kernel, index, value)
  local p = kernel.params[index]
  -- A nil is most often a misspelled or undefined variable: a global read that found nothing.
  local hint = value == nil and " (an undefined variable? check its spelling)" or ""
  errors.raise("invalid_argument", "%s: argument %d '%s' (%s) expects %s, got %s%s", kernel.label, index, p.name,
    p.type, expected(p), describe(value), hint)
end

local function bad_count(kernel, count)
  errors.raise("invalid_argument", "%s expects %d argument%s (%s), got %d", kernel.label, #kernel.params,
    #kernel.params == 1 and "" or "s", signature_text(kernel), count)
end

-- Fills a context slot from ctx (fields rank and world_size, method heap_bases()).
local function context_data(kernel, index, slot, ctx)
  local ok = type(ctx) == "table" and type(ctx.rank) == "number" and type(ctx.world_size) == "number"
    and type(ctx.heap_bases) == "function"
  if not ok then bad_argument(kernel, index, ctx) end
  slot[0].heap_bases = ffi.cast("const uint64_t*", ctx:heap_bases():data_ptr())
  slot[0].rank = ctx.rank
  slot[0].world_size = ctx.world_size
end

-- Lua source of the checks and the store for parameter i.
local function marshal_code(p, i)
  local a, s = "a" .. i, "s" .. i
  local bad = ("bad_argument(kernel, %d, %s)"):format(i, a)
  if p.kind == PARAM_POINTER then
    local dtype_check = p.dtype == "" and "" or (" or %s.dtype ~= %q"):format(a, p.dtype)
    return ("  if not is_tensor(%s)%s then %s end\n  %s[0] = %s:data_ptr()\n"):format(a, dtype_check, bad, s, a)
  elseif p.kind == PARAM_INTEGER then
    return ("  if type(%s) == 'number' then\n    if %s %% 1 ~= 0 or %s < %.17g or %s >= %.17g then %s end\n" ..
      "  elseif not fits_integer_cdata(%s, kernel.params[%d].range) then %s end\n  %s[0] = %s\n")
      :format(a, a, a, p.range.min, a, p.range.above, bad, a, i, bad, s, a)
  elseif p.kind == PARAM_FLOAT then
    return ("  if type(%s) ~= 'number' then %s end\n  %s[0] = %s\n"):format(a, bad, s, a)
  elseif p.kind == PARAM_FLOAT16 or p.kind == PARAM_BFLOAT16 then
    local convert = p.kind == PARAM_FLOAT16 and "iris_float16_from_double" or "iris_bfloat16_from_double"
    return ("  if type(%s) ~= 'number' then %s end\n  %s[0] = C.%s(%s)\n"):format(a, bad, s, convert, a)
  elseif p.kind == PARAM_BOOL then
    return ("  if type(%s) ~= 'boolean' then %s end\n  %s[0] = %s\n"):format(a, bad, s, a)
  elseif p.kind == PARAM_TENSOR_MAP then -- 128 bytes copied into the slot
    return ("  if not istype(tensor_map_t, %s) then %s end\n  %s[0] = %s\n"):format(a, bad, s, a)
  end
  -- The context: the same object every launch, so it is read once.
  return ("  if %s ~= last_ctx%d then context_data(kernel, %d, %s, %s); last_ctx%d = %s end\n")
    :format(a, i, i, s, a, i, a)
end

local function bad_iterations(kernel, iterations)
  errors.raise("invalid_argument", "%s:time_raw_launches(cfg, iterations, ...): iterations must be a positive integer, got %s",
    kernel.name, describe(iterations))
end

-- Builds `launch(self, cfg, ...)`, `launch_list(self, cfg, args)` and `time_raw_launches(self, cfg,
-- iterations, ...)` for `kernel`: all check the arguments and fill the same argument slots.
local function generate(kernel)
  local n = #kernel.params
  local slots, names, checks = {}, {}, {}
  local argv = ffi.new("void*[?]", math.max(n, 1))
  local source = {
    "local env = ...",
    "local kernel, C, errors, is_tensor = env.kernel, env.C, env.errors, env.is_tensor",
    "local bad_argument, bad_count, bad_iterations = env.bad_argument, env.bad_count, env.bad_iterations",
    "local context_data, read_config, fits_integer_cdata = env.context_data, env.read_config, env.fits_integer_cdata",
    "local handle, argv, dims, seconds = env.handle, env.argv, env.dims, env.seconds",
    "local tracing, note_origin = env.tracing, env.note_origin",
    "local capturing, note_launch, refuse = env.capturing, env.note_launch, env.refuse",
    "local istype, tensor_map_t = env.istype, env.tensor_map_t",
  }
  for i, p in ipairs(kernel.params) do
    slots[i] = ffi.new(p.ctype .. "[1]")
    argv[i - 1] = ffi.cast("void*", slots[i])
    names[i] = "a" .. i
    checks[i] = marshal_code(p, i)
    source[#source + 1] = ("local s%d = env.slots[%d]"):format(i, i)
    -- false, not nil: a nil argument (a misspelled `ctx`) must reach the check at the first launch too.
    if p.kind == PARAM_CONTEXT then source[#source + 1] = ("local last_ctx%d = false"):format(i) end
  end
  -- The arguments bound to a1..an from `values` (`count` of them, which must be n), each checked and
  -- stored in its slot, then cfg read.
  local function bind(count, values)
    return ("  local count = %s\n  if count ~= %d then bad_count(kernel, count) end\n%s%s" ..
      "  local shared = read_config(kernel, cfg, dims)\n"):format(count, n,
      n > 0 and ("  local %s = %s\n"):format(table.concat(names, ", "), values) or "", table.concat(checks))
  end
  local prologue = bind("select('#', ...)", "...")
  -- The launch once the arguments are bound. While a trace is on, the launch's span names this line;
  -- while ctx:capture(fn) runs, the graph learns the launch's tensors (one table read each while off).
  local issue = "  if tracing.on then note_origin() end\n" ..
    ("  if capturing.on then note_launch(kernel%s) end\n"):format(n > 0 and ", " .. table.concat(names, ", ") or "") ..
    "  local status = C.iris_kernel_launch(handle, dims, shared, argv)\n" ..
    "  if status ~= 0 then errors.check(status) end\nend"
  source[#source + 1] = "local function launch(self, cfg, ...)\n" .. prologue .. issue
  -- launch_list(self, cfg, args): the same launch with the arguments in a table (iris's own callers,
  -- src/lua/iris/ccl.lua, keep them in one). k:launch(cfg, unpack(args)) cost 1.5 to 1.7 us more per
  -- launch than the arguments written out (one H200, docs/experiments/launch_path.lua): LuaJIT leaves
  -- an unpack() into varargs uncompiled, and with it the whole launch.
  local listed = {}
  for i = 1, n do listed[i] = ("args[%d]"):format(i) end
  source[#source + 1] = "local function launch_list(self, cfg, args)\n" .. bind("#args", table.concat(listed, ", ")) .. issue
  source[#source + 1] = "local function time_raw_launches(self, cfg, iterations, ...)\n" ..
    "  if capturing.on then refuse(kernel.name .. ':time_raw_launches()') end\n" ..
    "  if type(iterations) ~= 'number' or iterations % 1 ~= 0 or iterations < 1 then bad_iterations(kernel, iterations) end\n" ..
    prologue ..
    "  local status = C.iris_kernel_time_raw_launches(handle, dims, shared, argv, iterations, seconds, seconds + 1)\n" ..
    "  if status ~= 0 then errors.check(status) end\n  return seconds[0], seconds[1]\nend"
  source[#source + 1] = "return launch, time_raw_launches, launch_list"
  local chunk = assert(loadstring(table.concat(source, "\n"), "=iris/kernel.lua (launch of " .. kernel.name .. ")"))
  local env = {
    kernel = kernel, C = C, errors = errors, is_tensor = is_tensor, bad_argument = bad_argument,
    bad_count = bad_count, bad_iterations = bad_iterations, context_data = context_data, read_config = read_config,
    fits_integer_cdata = fits_integer_cdata,
    handle = kernel._handle, argv = argv, dims = ffi.new("uint32_t[6]"), seconds = ffi.new("double[2]"), slots = slots,
    tracing = trace.state, note_origin = trace.note_origin,
    capturing = graph.state, note_launch = graph.note_launch, refuse = graph.refuse,
    istype = ffi.istype, tensor_map_t = tensor_map_t,
  }
  kernel._argument_storage = env -- the slots live as long as the kernel
  return chunk(env)
end

-- ---- modules and kernels ------------------------------------------------------------------------------------

local Kernel = {}
Kernel.__index = Kernel
M.Kernel = Kernel -- (exported with Module and module_mt for help() and the reference's checks)

function Kernel:__tostring() return ("iris kernel %s(%s)"):format(self.label, signature_text(self)) end

local Module = {}
M.Module = Module

-- The device's launch limits (iris_launch_limits): { grid = {x, y, z}, block = {x, y, z}, threads = n }.
local function launch_limits()
  local grid, block, threads = ffi.new("uint32_t[3]"), ffi.new("uint32_t[3]"), ffi.new("uint32_t[1]")
  errors.check(C.iris_launch_limits(grid, block, threads))
  return { grid = { grid[0], grid[1], grid[2] }, block = { block[0], block[1], block[2] }, threads = threads[0] }
end

local function make_kernel(handle)
  local name = ffi.string(C.iris_kernel_name(handle))
  local kernel = setmetatable({
    _handle = handle,
    _launch_what = name .. ":launch", -- (what an unknown cfg key's message names: made once, not per launch)
    name = name,
    label = ffi.string(C.iris_kernel_label(handle)),
    params = {},
    limits = launch_limits(),
  }, Kernel)
  local info = ffi.new("iris_param_info")
  for i = 1, C.iris_kernel_param_count(handle) do
    C.iris_kernel_param(handle, i - 1, info)
    kernel.params[i] = {
      name = ffi.string(info.name), type = ffi.string(info.type), kind = info.kind,
      ctype = ffi.string(info.ctype), dtype = ffi.string(info.dtype), min = info.min, max = info.max,
    }
    if info.kind == PARAM_INTEGER then kernel.params[i].range = integer_range(kernel.params[i]) end
  end
  kernel.launch, kernel.time_raw_launches, kernel.launch_list = generate(kernel)
  return kernel
end

-- mod:kernel("put_ones") or mod:kernel("scale<float>") (compiles the instance the first time).
function Module:kernel(name)
  if type(name) ~= "string" then
    errors.raise("invalid_argument", "mod:kernel(name): name must be a string such as \"scale<float>\", got %s",
      describe(name))
  end
  local cached = self._kernels[name]
  if cached then return cached end
  local out = ffi.new("iris_kernel*[1]")
  errors.check(C.iris_program_kernel(self._program, name, out))
  local canonical = ffi.string(C.iris_kernel_name(out[0]))
  local kernel = self._kernels[canonical] or make_kernel(out[0])
  self._kernels[canonical], self._kernels[name] = kernel, kernel
  return kernel
end

-- mod.NAME is mod:kernel("NAME"); the module's own fields start with "_", so no kernel name hides them.
local module_mt = {
  __index = function(self, key)
    local method = Module[key]
    if method ~= nil then return method end
    if type(key) ~= "string" then return nil end
    return Module.kernel(self, key)
  end,
  __tostring = function(self) return "iris module " .. self._origin end,
}
M.module_mt = module_mt

local function define_value(name, v)
  local kind = type(v)
  if kind == "number" then return v % 1 == 0 and ("%d"):format(v) or ("%.17g"):format(v) end
  if kind == "string" then return v end
  if kind == "boolean" then return v and "1" or "0" end
  errors.raise("invalid_argument", "compile options: defines.%s must be a number, string or boolean, got %s",
    tostring(name), describe(v))
end

M.COMPILE_OPTIONS = { "defines", "options", "name" }

-- Compiles `source`; `origin` names where it came from ("pattern.lua:12"), `description` names it in
-- compile errors, `file_name` is what compiler messages call it.
local function compile(source, opts, origin, description, file_name)
  if opts ~= nil and type(opts) ~= "table" then
    errors.raise("invalid_argument", "compile options must be a table {defines=, options=, name=}, got %s", describe(opts))
  end
  opts = opts or {}
  errors.check_keys(opts, M.COMPILE_OPTIONS, "compile options")
  local defines, options = {}, {}
  if opts.defines ~= nil then
    if type(opts.defines) ~= "table" then
      errors.raise("invalid_argument", "compile options: defines must be a table NAME = value, got %s", describe(opts.defines))
    end
    local names = {}
    for name in pairs(opts.defines) do
      if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
        errors.raise("invalid_argument", "compile options: define name %s is not an identifier", describe(name))
      end
      names[#names + 1] = name
    end
    table.sort(names) -- the same defines give the same cache key in any table order
    for _, name in ipairs(names) do
      defines[#defines + 1] = name
      defines[#defines + 1] = define_value(name, opts.defines[name])
    end
  end
  if opts.options ~= nil then
    if type(opts.options) ~= "table" then
      errors.raise("invalid_argument", "compile options: options must be a list of compiler flags, got %s", describe(opts.options))
    end
    for i, flag in ipairs(opts.options) do
      if type(flag) ~= "string" then
        errors.raise("invalid_argument", "compile options: options[%d] must be a string, got %s", i, describe(flag))
      end
      options[i] = flag
    end
  end
  if opts.name ~= nil and type(opts.name) ~= "string" then
    errors.raise("invalid_argument", "compile options: name must be a string, got %s", describe(opts.name))
  end
  if opts.name then
    file_name = opts.name
    description = ("%s (%s)"):format(opts.name, description)
  end
  local c_defines = ffi.new("const char*[?]", math.max(#defines, 1), defines)
  local c_options = ffi.new("const char*[?]", math.max(#options, 1), options)
  local out = ffi.new("iris_program*[1]")
  if trace.state.on then trace.note_origin(origin) end -- the snippet's line: the call's is where it ends
  errors.check(C.iris_compile(source, #source, origin, description, file_name, c_defines, #defines / 2, c_options,
    #options, out))
  return setmetatable({ _program = out[0], _origin = origin, _kernels = {} }, module_mt)
end

-- One of iris's own kernel files (kernels/NAME.hip), compiled once per process like a snippet: the
-- collectives and other built-in features launch their kernels through it.
local builtins = {}

function M.builtin(name)
  local module = builtins[name]
  if module == nil then
    local out = ffi.new("iris_program*[1]")
    errors.check(C.iris_compile_builtin(name, out))
    module = setmetatable({ _program = out[0], _origin = "kernels/" .. name .. ".hip", _kernels = {} }, module_mt)
    builtins[name] = module
  end
  return module
end

-- ---- timing ------------------------------------------------------------------------------------------------

local function positive_integer(value, default, what, minimum)
  if value == nil then return default end
  if type(value) ~= "number" or value % 1 ~= 0 or value < minimum then
    errors.raise("invalid_argument", "iris.bench: %s must be an integer >= %d, got %s", what, minimum, describe(value))
  end
  return value
end

M.BENCH_OPTIONS = { "warmup", "iters", "lead" }

local LEAD_CFG = { grid = 1, block = 1 }

local function bench(fn, opts)
  if graph.state.on then graph.refuse("iris.bench()", "it times fn on the device, which waits for it") end
  if type(fn) ~= "function" then
    errors.raise("invalid_argument", "iris.bench(fn [, {warmup=, iters=}]): fn must be a function, got %s", describe(fn))
  end
  if opts ~= nil and type(opts) ~= "table" then
    errors.raise("invalid_argument", "iris.bench: options must be a table {warmup=, iters=}, got %s", describe(opts))
  end
  opts = opts or {}
  errors.check_keys(opts, M.BENCH_OPTIONS, "iris.bench")
  local warmup = positive_integer(opts.warmup, 3, "warmup", 0)
  local iters = positive_integer(opts.iters, 10, "iters", 1)
  -- lead: microseconds the device is kept busy before each timed call (kernels/bench_lead.hip), so the
  -- host's issue of the call is not timed; the cpu backend runs a kernel as it is launched: nothing there.
  local lead = positive_integer(opts.lead, 0, "lead", 0)
  local lead_kernel = lead > 0 and M.builtin("bench_lead").iris_bench_lead or nil -- (compiled everywhere: checked)
  if ffi.string(C.iris_backend_name()) == "cpu" then lead_kernel = nil end
  local out = ffi.new("iris_timer*[1]")
  errors.check(C.iris_timer_create(out))
  local timer = ffi.gc(out[0], C.iris_timer_destroy)
  local ms = ffi.new("double[1]")
  for _ = 1, warmup do fn() end
  local times, total = {}, 0
  for i = 1, iters do
    if lead_kernel then lead_kernel:launch(LEAD_CFG, lead * 1000) end
    errors.check(C.iris_timer_start(timer))
    fn()
    errors.check(C.iris_timer_stop(timer, ms))
    times[i] = ms[0]
    total = total + ms[0]
  end
  table.sort(times)
  local middle = math.floor((iters + 1) / 2)
  local median = iters % 2 == 1 and times[middle] or (times[middle] + times[middle + 1]) / 2
  return { median_ms = median, min_ms = times[1], mean_ms = total / iters, iters = iters }
end

-- ---- where a snippet is --------------------------------------------------------------------------------------

local script_texts = {} -- script path -> its text (or false): scripts do not change while they run

local function script_text(path)
  local text = script_texts[path]
  if text == nil then
    local file = io.open(path, "rb")
    text = file and file:read("*a") or false
    if file then file:close() end
    script_texts[path] = text
  end
  return text or nil
end

-- "script.lua:12": the script line holding the snippet's first line. The caller's line is not enough:
-- LuaJIT reports `iris.compile [[...]]` at the line where the string ends. The snippet is found in the
-- script's text (the occurrence nearest the call); without a script file, the caller's line. When it
-- was found, also the script's path and that line, for the #line directive that makes compiler
-- messages name the script's own lines.
local function snippet_origin(source)
  local frame = errors.user_frame()
  if not frame then return "(interactive)" end
  local line = frame.currentline or 0
  local path = frame.source:sub(1, 1) == "@" and frame.source:sub(2)
  local text = path and #source > 0 and script_text(path)
  local best
  if text then
    local position = 1
    while true do
      local at = text:find(source, position, true)
      if not at then break end
      local _, newlines = text:sub(1, at - 1):gsub("\n", "")
      local start = newlines + 1
      if not best or math.abs(start - line) < math.abs(best - line) then best = start end
      position = at + 1
    end
  end
  return ("%s:%d"):format(frame.short_src, best or line), best and path, best
end

-- The source as the compiler sees it: with `#line` naming the script and the snippet's first line
-- there, so that an error on the snippet's 10th line reads script.lua:21, the line of the mistake.
local function mapped_to_script(source, path, line)
  if not path then return source end
  return ('#line %d "%s"\n%s'):format(line, path:gsub('[\\"]', "\\%0"), source)
end

-- ---- the public functions -------------------------------------------------------------------------------------

-- iris.compile(source [, opts])
function M.compile(source, opts)
  if type(source) ~= "string" then
    errors.raise("invalid_argument", "iris.compile(source [, opts]): source must be a string of HIP C++, got %s",
      describe(source))
  end
  local origin, path, line = snippet_origin(source)
  return compile(mapped_to_script(source, path, line), opts, origin, "the snippet at " .. origin,
    opts and opts.name or "snippet")
end

-- iris.compile_file(path [, opts])
function M.compile_file(path, opts)
  if type(path) ~= "string" then
    errors.raise("invalid_argument", "iris.compile_file(path [, opts]): path must be a string, got %s", describe(path))
  end
  -- Not io.open: a fifo would block it and /dev/zero would fill the memory (iris_read_source_file
  -- takes regular files only, bounded).
  local text, size = ffi.new("const char*[1]"), ffi.new("size_t[1]")
  if C.iris_read_source_file(path, text, size) ~= 0 then
    errors.raise("invalid_argument", "iris.compile_file: %s", ffi.string(C.iris_last_error()))
  end
  return compile(ffi.string(text[0], size[0]), opts, path, path, path)
end

M.bench = bench

-- ---- tensor maps (TMA descriptors) ----------------------------------------------------------------------

local codes = require "iris.codes"
M.TENSOR_MAP_USAGE = "ctx:tensor_map(t, {box_rows, box_cols})"

-- ctx:tensor_map(t, {box_rows, box_cols}): the TMA descriptor of the matrix t (a 2-d tensor whose rows
-- are contiguous), read and written in boxes of box_rows x box_cols with 128-byte swizzle: what a
-- kernel's `const __grid_constant__ iris::gemm::TensorMap` parameter takes (docs/device-api.md). The
-- map keeps t from being collected; it names t's memory, so it is good while t is (not after t:free()).
function M.tensor_map(ctx, t, box)
  local what = M.TENSOR_MAP_USAGE
  if not is_tensor(t) then
    errors.raise("invalid_argument", "%s: t must be a tensor, got %s", what, describe(t))
  end
  if t._ndim ~= 2 or t._strides[2] ~= 1 then
    errors.raise("invalid_argument", "%s: t must be a matrix (2-d) whose rows are contiguous (stride 1 along dim 2); "
      .. "take a copy of a transposed view (t:contiguous())", what)
  end
  if type(box) ~= "table" or type(box[1]) ~= "number" or type(box[2]) ~= "number" or box[1] % 1 ~= 0 or box[2] % 1 ~= 0 then
    errors.raise("invalid_argument", "%s: box must be {rows, columns} of whole numbers, got %s", what, describe(box))
  end
  local map = tensor_map_t()
  errors.check(C.iris_tensor_map_encode(t:data_ptr(), codes.DTYPE[t.dtype], t._shape[1], t._shape[2], t._strides[1],
    box[1], box[2], map))
  graph.map_tensors[map] = t
  return map
end

-- ctx:device_barrier(): a barrier among the ranks' devices (kernels/device_barrier.hip), asynchronous
-- like a launch (iris.context attaches it and checks that it is called on the context). Its epoch is
-- counted on the device, so it can be captured (ctx:capture), as the collective it is.
function M.device_barrier(ctx)
  if graph.state.on then graph.note_collective("ctx:device_barrier()") end
  if trace.state.on then trace.note_origin() end
  errors.check_waiting(C.iris_device_barrier)
end

return M
