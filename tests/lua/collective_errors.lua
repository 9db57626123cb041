-- The collective errors: out of heap (exact numbers, on every rank, after collecting garbage) and
-- ranks that diverge (different sizes, different calls). Every rank gets the error; the job goes on.
package.path = arg[0]:match("^(.*/)") .. "lib/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init { heap_size = "1MiB" }
local rank, world = ctx.rank, ctx.world_size

-- out of heap: the user region is 1 MiB - 64 KiB = 960 KiB
local message = check.fails("heap exhausted: asked 2 MiB, 960 KiB free (largest 960 KiB) of 1 MiB",
  function() ctx:zeros(512 * 1024) end)
check.truthy(message:find("collective_errors.lua:%d+: heap exhausted"), "the message names the user's line: " .. message)
local keep = ctx:zeros(100 * 1024, "uint8") -- 100 KiB
check.fails("heap exhausted: asked 1000 KiB, 860 KiB free (largest 860 KiB) of 1 MiB",
  function() ctx:empty(1000 * 1024, "uint8") end)
-- garbage is collected on every rank before the heap counts as exhausted
for _ = 1, 3 do local garbage = ctx:zeros(200 * 1024, "uint8") end
local fits = ctx:zeros(800 * 1024, "uint8")
check.equal(fits:numel(), 800 * 1024, "collected garbage made room")
fits:free()

if world > 1 then
  -- different sizes in the same step
  check.fails("ranks asked different sizes in ctx:zeros(): rank 0 asked 4 KiB, rank 1 asked 8 KiB",
    function() ctx:zeros(rank == 1 and 2048 or 1024) end)
  -- different calls
  local ok, err = pcall(function()
    if rank == 0 then ctx:zeros(4) else ctx:barrier() end
  end)
  check.truthy(not ok, "diverging calls fail")
  check.truthy(err:find("collective mismatch: this rank is in", 1, true), "divergence message: " .. err)
  check.truthy(err:find("ctx:zeros()", 1, true) and err:find("ctx:barrier()", 1, true), "names both calls: " .. err)
  -- still symmetric afterwards
  check.same_on_all_ranks(ctx, ctx:zeros(8):offset(), "offset after the errors")
end

ctx:barrier()
if rank == 0 then print("collective_errors passed on " .. world .. " rank(s)") end
