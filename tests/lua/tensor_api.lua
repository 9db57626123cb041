-- The tensor API (dtypes, element access, views, reductions, tostring) on every rank, host pointers.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ctx = iris.init { heap_size = "32MiB" }
require("tensor_suite").run(ctx)
ctx:barrier()
if ctx.rank == 0 then print("tensor_api passed on " .. ctx.world_size .. " rank(s)") end
