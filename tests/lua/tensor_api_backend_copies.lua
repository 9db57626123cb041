-- The tensor API through backend copies (the path of GPU backends, whose memory the host cannot
-- address), exercised on whatever backend runs the tests.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ctx = iris.init { heap_size = "32MiB" }
require("iris.tensor").use_backend_copies(true)
require("tensor_suite").run(ctx)
ctx:barrier()
if ctx.rank == 0 then print("tensor_api_backend_copies passed on " .. ctx.world_size .. " rank(s)") end
