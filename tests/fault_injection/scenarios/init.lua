-- iris.init with a 1 GiB heap per rank on the cpu backend (reserving it takes about half a second),
-- then barriers until killed.
package.path = arg[0]:match("^(.*/)") .. "?.lua;" .. package.path
local fi = require "fi"
fi.started()
fi.ready()
local ctx = iris.init { heap_size = os.getenv("IRIS_FI_HEAP") or "1GiB" }
fi.keep_going(30, function() ctx:barrier() end)
