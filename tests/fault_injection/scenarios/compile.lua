-- Kernels compiled by the host compiler one after another, each new (its source holds the case and a
-- counter, so the cache never has it): a signal lands while some rank's c++ runs, or waits for it.
package.path = arg[0]:match("^(.*/)") .. "?.lua;" .. package.path
local fi = require "fi"
fi.started()
local ctx = iris.init { heap_size = "1MiB" }
local t = ctx:zeros(4, "int32")
local n = 0
fi.ready()
fi.keep_going(30, function()
  n = n + 1
  local mod = iris.compile(("// case %s, kernel %d\n__global__ void k(int* p) { p[threadIdx.x] = %d; }"):format(
    os.getenv("IRIS_FI_CASE"), n, n))
  mod.k:launch({ grid = 1, block = 4 }, t)
  ctx:barrier()
end)
