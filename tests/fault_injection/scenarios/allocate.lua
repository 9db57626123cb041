-- Tensors allocated and freed in a loop (collective allocations, the release exchange, zeroing).
package.path = arg[0]:match("^(.*/)") .. "?.lua;" .. package.path
local fi = require "fi"
fi.started()
local ctx = iris.init { heap_size = "64MiB" }
local n = 0
fi.ready()
fi.keep_going(30, function()
  n = n + 1
  local t = ctx:zeros(1 + (n * 7919) % (4 * 1024 * 1024), "uint8")
  local u = ctx:full({ 3, n % 5 + 1 }, n, "int32")
  t:free()
  if n % 3 == 0 then u:free() end
end)
