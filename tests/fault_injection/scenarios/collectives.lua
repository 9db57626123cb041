-- Host and device collectives in a loop: ctx:barrier(), ctx:broadcast() of a value and of a tensor,
-- ctx:device_barrier() and ctx.ccl.all_reduce.
package.path = arg[0]:match("^(.*/)") .. "?.lua;" .. package.path
local fi = require "fi"
fi.started()
local ctx = iris.init { heap_size = "16MiB" }
local t = ctx:zeros(1024)
-- Their kernels are compiled before the phase starts (the driver's warm-up put them in its cache).
ctx:device_barrier()
ctx.ccl.all_reduce(t, t)
ctx:synchronize()
local n = 0
fi.ready()
fi.keep_going(30, function()
  n = n + 1
  ctx:barrier()
  ctx:broadcast(ctx.rank == 0 and { n = n } or nil)
  ctx:broadcast(t, n % ctx.world_size)
  ctx:device_barrier()
  ctx.ccl.all_reduce(t, t)
end)
