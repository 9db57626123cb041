-- iris: the public Lua module (docs/architecture.md lists the parts and where each lives).
-- Policy lives in Lua (defaults, argument checks, printing); mechanism in C++ behind the C API
-- (src/capi), reached through the FFI declarations of iris.cdef. The table below is the whole public
-- module, assembled from the parts:
--   iris.context    iris.init and the context (ctx:zeros() and friends, collectives, logging)
--   iris.kernel     iris.compile, iris.compile_file, launches, iris.bench
--   iris.ccl        ctx.ccl: collectives run by kernels (set on the context when it is created)
--   iris.assertions iris.assert_equal, iris.assert_allclose
--   iris.testing    iris.test, iris.skip (and the `iris-lua test` runner, iris.cmd.test)
--   iris.trace      iris.trace.start/stop/mark/span: a timeline of the whole job
--   iris.progress   iris.progress: progress lines for long sweeps
--   iris.plot       iris.plot.heatmap/lines/timeline: pictures as SVG
-- First: a guard against a LuaJIT code generation bug in Debian 12's LuaJIT, before any loop compiles
-- (iris/luajit_guard.lua, docs/reliability.md "check_keys").
require("iris.luajit_guard").install()
local ffi = require "ffi"
local cdef = require "iris.cdef"
local errors = require "iris.errors"
local C = ffi.C

if C.iris_abi_version() ~= cdef.abi_version then
  error(("iris module built for host ABI %d, but this host has ABI %d: rebuild iris-lua"):format(
    cdef.abi_version, C.iris_abi_version()), 0)
end

local context = require "iris.context"
local kernel = require "iris.kernel"
local assertions = require "iris.assertions"
local testing = require "iris.testing"
local dtypes = require "iris.dtypes"

-- Ceiling division for grid sizes: iris.cdiv(1000, 256) == 4.
local function cdiv(a, b)
  if type(a) ~= "number" or type(b) ~= "number" or a % 1 ~= 0 or b % 1 ~= 0 then
    errors.raise("invalid_argument", "iris.cdiv(a, b) takes two integers, got %s and %s", type(a), type(b))
  end
  if b <= 0 then errors.raise("invalid_argument", "iris.cdiv(a, b): b must be positive, got %d", b) end
  return math.floor((a + b - 1) / b)
end

-- iris.plot: iris.plot's pictures and iris.timeline's (which draws with iris.plot's pieces).
local plot = { timeline = require("iris.timeline").render }
for name, f in pairs(require("iris.plot").public) do plot[name] = f end

local iris = {
  version = ffi.string(C.iris_version()),
  rank = function() return C.iris_rank() end,
  world_size = function() return C.iris_world_size() end,
  cdiv = cdiv,
  init = context.init,
  manual_seed = context.manual_seed,
  compile = kernel.compile,
  compile_file = kernel.compile_file,
  bench = kernel.bench,
  assert_equal = assertions.assert_equal,
  assert_allclose = assertions.assert_allclose,
  options = require "iris.options",
  test = testing.test,
  skip = testing.skip,
  before_each = testing.before_each,
  after_each = testing.after_each,
  trace = require("iris.trace").public,
  progress = require("iris.progress").progress,
  plot = plot,
  dtypes = { unpack(dtypes.names) }, -- and each name as a field: iris.float32 == "float32"
  help = function(x) return require("iris.help").help(x) end,
}
for _, name in ipairs(dtypes.names) do iris[name] = name end

return iris
