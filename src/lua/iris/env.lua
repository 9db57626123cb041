-- The environment variables iris-lua reads, as the Lua side reads them: through their one reader
-- (src/core/env.def, iris_env), never os.getenv, so every variable is declared, documented
-- (docs/environment.md) and listed by --help.
--   require("iris.env")("IRIS_BACKEND")  -- its text, or nil when unset or empty
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local value = ffi.new("const char*[1]")

return function(name)
  errors.check(C.iris_env(name, value))
  return value[0] ~= nil and ffi.string(value[0]) or nil
end
