-- The labs' harness (iris.lab.harness): the parts a lab check cannot show on this machine.
local ffi = require "ffi"
local harness = require "iris.lab.harness"
local options = require "iris.options"

pcall(ffi.cdef, [[
int setenv(const char* name, const char* value, int overwrite);
int unsetenv(const char* name);
]])

-- Runs fn with the environment variable `name` set to `value` (nil: unset), then puts it back.
local function with_env(name, value, fn)
  local saved = os.getenv(name)
  local function set(v)
    if v == nil then ffi.C.unsetenv(name) else ffi.C.setenv(name, v, 1) end
  end
  set(value)
  local ok, problem = pcall(fn)
  set(saved)
  if not ok then error(problem, 0) end
end

-- Regression: the harness guessed the backend itself, and took IRIS_BACKEND="" for cpu where
-- iris.init (and iris.options.expects_gpu) take it for auto: a GPU run got the cpu backend's heap.
iris.test("the lab heap follows iris.options.expects_gpu, IRIS_BACKEND='' included", function()
  local real = options.expects_gpu
  local ok, problem = pcall(with_env, "IRIS_HEAP_SIZE", nil, function()
    with_env("IRIS_BACKEND", "", function()
      options.expects_gpu = function() return true end
      iris.assert_equal(harness.heap_size(), "1GiB", "heap where a GPU is expected")
      options.expects_gpu = function() return false end
      iris.assert_equal(harness.heap_size(), "32MiB", "heap where the cpu backend is expected")
    end)
  end)
  options.expects_gpu = real
  if not ok then error(problem, 0) end
end)

iris.test("IRIS_BACKEND='' is auto to iris.options.expects_gpu, as to iris.init", function()
  local auto, empty
  with_env("IRIS_BACKEND", "auto", function() auto = options.expects_gpu() end)
  with_env("IRIS_BACKEND", "", function() empty = options.expects_gpu() end)
  iris.assert_equal(empty, auto, "expects_gpu with IRIS_BACKEND=''")
  with_env("IRIS_BACKEND", "cpu", function() iris.assert_equal(options.expects_gpu(), false, "with IRIS_BACKEND=cpu") end)
end)

iris.test("IRIS_HEAP_SIZE, when set, is the lab's heap", function()
  with_env("IRIS_HEAP_SIZE", "64MiB", function() iris.assert_equal(harness.heap_size(), nil, "heap size option") end)
end)
