-- The collective errors: out of heap (exact numbers, on every rank, after collecting garbage) and
-- ranks that diverge (different sizes, different calls). Every rank gets the error; the job goes on.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local check = require "check"
local ctx = iris.init { heap_size = "32MiB" }
local rank, world = ctx.rank, ctx.world_size
local human = require("iris.context").human_bytes

-- Out of heap: the message's numbers are the allocator's (the same on every rank). The exact figures
-- of a known heap are checked by the CLI test cli/out_of_heap.
local asked = 2 * ctx.heap_size
local message = check.fails("heap exhausted: asked " .. human(asked) .. ", ", function() ctx:empty(asked, "uint8") end)
check.truthy(message:find("collective_errors.lua:%d+: heap exhausted"), "the message names the user's line: " .. message)
local s = ctx:memory_stats()
check.truthy(message:find(("%s free (largest %s) of %s"):format(human(s.free), human(s.largest_free),
  human(ctx.heap_size)), 1, true), "free and largest as the allocator has them: " .. message)
check.truthy(message:find("iris.init{heap_size=...} or IRIS_HEAP_SIZE", 1, true), "says what to do: " .. message)
check.same_on_all_ranks(ctx, s.free, "free bytes")

-- Garbage is collected on every rank before the heap counts as exhausted: tensors dropped without
-- t:free() make room for one that needs most of the heap.
local big = math.floor(s.largest_free * 0.6)
for _ = 1, 3 do local garbage = ctx:empty(big, "uint8") end
local fits = ctx:empty(big, "uint8")
check.equal(fits:numel(), big, "collected garbage made room")
fits:free()

if world > 1 then
  -- different sizes in the same step
  check.fails("ranks asked different tensors in ctx:zeros(): rank 0 asked float32 {1024} (4 KiB), rank 1 asked float32 {2048} (8 KiB)",
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
