-- iris: the public Lua module (shared/API.md; reference in docs/lua-api.md).
-- Policy lives in Lua (defaults, argument checks, printing); mechanism in C++ behind the C API
-- (src/capi), reached through the FFI declarations of iris.cdef. Each part adds its functions here:
--   iris.context    iris.init, the context, host collectives, logging
--   iris.tensor     tensors on the symmetric heap (used through ctx:zeros() and friends)
--   iris.kernel     iris.compile, iris.compile_file, launches, iris.bench
--   iris.ccl        ctx.ccl: collectives run by kernels (set on the context when it is created)
--   iris.assertions iris.assert_equal, iris.assert_allclose
--   iris.testing    iris.test, iris.skip and the `iris-lua test` runner
local ffi = require "ffi"
local cdef = require "iris.cdef"
local errors = require "iris.errors"
local C = ffi.C

if C.iris_abi_version() ~= cdef.abi_version then
  error(("iris module built for host ABI %d, but this host has ABI %d: rebuild iris-lua"):format(
    cdef.abi_version, C.iris_abi_version()), 0)
end

local iris = {}

iris.version = ffi.string(C.iris_version())

function iris.rank() return C.iris_rank() end
function iris.world_size() return C.iris_world_size() end

-- Ceiling division for grid sizes: iris.cdiv(1000, 256) == 4.
function iris.cdiv(a, b)
  if type(a) ~= "number" or type(b) ~= "number" or a % 1 ~= 0 or b % 1 ~= 0 then
    errors.raise("invalid_argument", "iris.cdiv(a, b) takes two integers, got %s and %s", type(a), type(b))
  end
  if b <= 0 then errors.raise("invalid_argument", "iris.cdiv(a, b): b must be positive, got %d", b) end
  return math.floor((a + b - 1) / b)
end

for _, part in ipairs { "iris.context", "iris.kernel", "iris.assertions", "iris.testing" } do
  require(part).install(iris)
end

return iris
