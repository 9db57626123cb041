-- Lab 01's checker (docs/labs/01-heap.md): where every rank's copy of a tensor is, from the heap bases;
-- an all-gather written with remote stores, every rank's result checked, timed next to ctx.ccl.all_gather.
local ffi = require "ffi"
local H = require "iris.lab.harness"

local WHERE_HINT = "rank r's copy of *p is at hb[r] + (p - hb[ctx.rank]): a tensor has the same offset in every heap, "
  .. "so only the base differs (this is iris::translate)"
local GATHER_HINT = "each rank writes its k values at elements ctx.rank * k ... ctx.rank * k + k - 1 of every rank's "
  .. "`all`, its own included: ctx.store(p, value, r) writes *p in rank r's heap; and the grid must cover all k "
  .. "elements (iris.cdiv(k, 256) blocks)"

return H.define {
  number = 1,
  title = "ranks, the symmetric heap, offsets, heap_bases, translation",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "where", "gather" },
  run = function(check, lab)
    local ctx = check.ctx
    local W = ctx.world_size
    local hb = ctx:heap_bases():to_table()
    local function address(t) return tonumber(ffi.cast("uintptr_t", t:data_ptr())) end

    for _, before in ipairs { 1, 3000 } do
      check:step(("where: every rank's copy of a tensor (%s allocated before it)"):format(H.count(before, "float")),
        function()
        local _ = ctx:zeros(before) -- so the tensor's offset is not the first one
        local t, addrs = ctx:zeros(7), ctx:zeros(W, "uint64")
        lab.where(t, addrs)
        ctx:synchronize()
        local expected = {}
        for r = 1, W do expected[r] = hb[r] + address(t) - hb[ctx.rank + 1] end
        iris.assert_equal(addrs, expected, "addrs after lab.where")
      end, WHERE_HINT)
    end

    -- Every rank's k values (its own seed stream), `all`, and what `all` must hold afterwards.
    local function inputs(k, tag)
      local mine = ctx:randint(-1000000, 1000000, k, "int32", check:seed(tag))
      local all, expected = ctx:full(W * k, H.SENTINEL, "int32"), ctx:empty(W * k, "int32")
      for r = 0, W - 1 do expected:narrow(1, r * k + 1, k):copy(mine:peer(r)) end
      return mine, all, expected
    end

    for _, k in ipairs { 1, 1000, 4099 } do
      check:step(("gather: %s from every rank into every rank"):format(H.count(k, "int32 value")), function()
        local mine, all, expected = inputs(k, "gather " .. k)
        lab.gather(mine, all)
        ctx:barrier()
        check:expect(all, expected, "all after lab.gather")
      end, GATHER_HINT)
    end

    local k = check:size(4099, 1024 * 1024)
    local mine, all, expected = inputs(k, "timed")
    local results
    check:step(("gather: yours and ctx.ccl.all_gather, %d interleaved timed rounds of %d int32 values per rank, every "
      .. "run checked"):format(check.runs, k), function()
      check:need("ccl", "ctx.ccl (the collectives)")
      results = check:time_together({
        { name = "yours", call = function() lab.gather(mine, all) end },
        { name = "ctx.ccl.all_gather", call = function() ctx.ccl.all_gather(all, mine) end },
      }, {
        back_to_back = true, -- a gather may follow the last one at once (every call writes the same values)
        reset = function() all:fill(H.SENTINEL) end,
        verify = function(label) check:expect(all, expected, "all after " .. label) end,
      })
    end, GATHER_HINT)
    check:compare { what = ("per call, %d int32 values per rank"):format(k), yours = results.yours,
                    reference = { name = "ctx.ccl.all_gather", result = results["ctx.ccl.all_gather"] }, threshold = 1.5 }
  end,
}
