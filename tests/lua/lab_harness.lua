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

-- Issue 27: honest lab timings. A grade only where the rounds' spread allows one.
iris.test("a ratio is graded only when its middle half is on one side of the threshold", function()
  iris.assert_equal(harness.quantile({ 4, 1, 3, 2, 5 }, 0.5), 3)
  iris.assert_equal(harness.quantile({ 1, 2, 3, 4, 5 }, 0.25), 2)
  iris.assert_equal(harness.quantile({ 1, 2 }, 0.5), 1.5)
  iris.assert_equal(harness.grade({ q1 = 0.9, median = 1.0, q3 = 1.1 }, 1.2), "full")
  iris.assert_equal(harness.grade({ q1 = 1.3, median = 1.4, q3 = 1.6 }, 1.2), "slower")
  iris.assert_equal(harness.grade({ q1 = 1.1, median = 1.2, q3 = 1.3 }, 1.2), "noisy")
end)

-- The subjects are timed alike, interleaved, every run checked; a slow subject reads slower, the
-- batches hold several calls where the calls may follow each other, and every rank gets the same times.
iris.test("time_together times every subject the same way, checks every run and agrees across ranks", function()
  local ctx = iris.init {}
  local check = setmetatable({ ctx = ctx, runs = 4 }, { __index = harness.Check })
  local spin = iris.compile [[
__global__ void spin(float* out, int iterations) {
  float x = out[0];
  for (int i = 0; i < iterations; ++i) x = x * 0.999f + 1.0f;
  if (threadIdx.x == 0) out[0] = x;
}
]].spin
  local out = ctx:zeros(1)
  local order, verified = {}, 0
  local results = check:time_together({
    { name = "short", call = function() order[#order + 1] = "short"; spin:launch({ grid = 1, block = 1 }, out, 10) end },
    { name = "long", call = function() order[#order + 1] = "long"; spin:launch({ grid = 1, block = 1 }, out, 400000) end },
  }, { back_to_back = true, verify = function() verified = verified + 1 end })
  iris.assert_equal(verified, 4 + 2 * 4, "every run checked (the warm-up runs too)")
  assert(results.long.median > results.short.median, "the longer kernel reads longer")
  assert(results.short.batch == results.long.batch and results.short.batch >= 1, "one batch size for every subject")
  assert(results.short.q1 <= results.short.median and results.short.median <= results.short.q3, "quartiles in order")
  -- Interleaved: the first round starts with short, the second with long.
  local batch = results.short.batch
  assert(order[5] == "short" and order[5 + 2 * batch] == "long", table.concat(order, " ", 1, math.min(#order, 8)))
  local theirs = ctx:broadcast(results.long.median, 0)
  iris.assert_equal(theirs, results.long.median, "the same times on every rank")
end)
