-- k:launch_list(cfg, args) (docs/lua-api.md): the arguments from a table, checked as k:launch checks them.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init {}
local mod = iris.compile [[
__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
]]
local k = mod.axpy

iris.test("launch_list launches the table's arguments", function()
  local x, y = ctx:full(100, 2, "float32"), ctx:full(100, 1, "float32")
  local args = { y, x, 0.5, 100 }
  for _ = 1, 3 do k:launch_list({ grid = 1, block = 128 }, args) end
  ctx:synchronize()
  iris.assert_equal(y, 4)
end)

iris.test("launch_list checks the count and each argument as launch does", function()
  local x, y = ctx:zeros(8, "float32"), ctx:zeros(8, "float32")
  check.fails("expects 4 arguments", function() k:launch_list({ grid = 1, block = 32 }, { y, x, 0.5 }) end)
  check.fails("argument 4 'n' (int) expects", function() k:launch_list({ grid = 1, block = 32 }, { y, x, 0.5, 1.5 }) end)
  check.fails("argument 1 'y'", function() k:launch_list({ grid = 1, block = 32 }, { 7, x, 0.5, 8 }) end)
  check.fails("cfg must be a table", function() k:launch_list(nil, { y, x, 0.5, 8 }) end)
end)
