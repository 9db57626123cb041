-- Lab 06's checker (docs/labs/06-ring.md): the student's two-shot and ring all-reduces at sizes that do
-- not divide evenly, every rank's result checked; then a sweep of sizes, every run of every variant
-- checked, next to ctx.ccl.all_reduce's one_shot, two_shot and ring and the backend's library; it
-- says at which size each of the student's variants wins.
local H = require "iris.lab.harness"

local TWO_SHOT_HINT = "rank r owns chunk r: it reads that chunk of every rank's inp (ctx.load(inp + i, q) for every "
  .. "q), adds, and stores the sum into that chunk of every rank's out (ctx.store(out + i, sum, q))"
local RING_HINT = "at reduce-scatter step s a rank stores partial + inp[i] into the next rank's stage slot s, and at "
  .. "all-gather step s its final out[i] into the next rank's out; after the reduce-scatter, chunk (rank + 1) mod "
  .. "world_size is complete (inp plus the last partial). A wait that gives up names the flag and the values: a step "
  .. "that never signalled"
local SWEEP_RUNS = 3

return H.define {
  number = 6,
  title = "ring and two-shot all-reduce; the size at which each wins",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "two_shot", "ring" },
  run = function(check, lab)
    local ctx = check.ctx
    local variants = { { "two_shot", TWO_SHOT_HINT }, { "ring", RING_HINT } }

    for _, n in ipairs { 1, 7, 1000, 4099 } do
      for _, v in ipairs(variants) do
        check:step(("%s of %s on every rank"):format(v[1], H.count(n, "float")), function()
          local inp, expected = check:sum_inputs(n, v[1] .. " " .. n)
          local out = ctx:full(n, H.SENTINEL)
          lab[v[1]](out, inp)
          ctx:barrier()
          check:expect(out, expected, ("out after lab.%s"):format(v[1]))
        end, v[2])
      end
    end

    -- The sweep: sizes by factors of 4; every variant on the same inputs, every run checked.
    local sizes = check:size({ 1024, 4096, 16384, 65536 }, { 4096, 65536, 1048576, 16777216 })
    local columns = { "floats", "your two_shot", "your ring", "ccl one_shot", "ccl two_shot", "ccl ring", "library" }
    local rows, at_largest = {}, {}
    for _, n in ipairs(sizes) do
      local inp, expected = check:sum_inputs(n, "sweep " .. n)
      local out = ctx:zeros(n)
      local function timed(call)
        return check:time(call, {
          runs = math.min(check.runs, SWEEP_RUNS),
          reset = function() out:fill(H.SENTINEL) end,
          verify = function(run) check:expect(out, expected, ("out after timed run %d"):format(run)) end,
        })
      end
      local row = { n }
      for _, v in ipairs(variants) do
        check:step(("%s: %d timed runs of %s, each checked"):format(v[1], math.min(check.runs, SWEEP_RUNS),
          H.count(n, "float")), function()
          row[#row + 1] = timed(function() lab[v[1]](out, inp) end)
        end, v[2])
      end
      check:step(("references at %s: ctx.ccl.all_reduce's variants and the library"):format(H.count(n, "float")), function()
        check:need("ccl", "ctx.ccl (the collectives)")
        for _, variant in ipairs { "one_shot", "two_shot", "ring" } do
          row[#row + 1] = timed(function() ctx.ccl.all_reduce(out, inp, { variant = variant }) end)
        end
        local library = check:library_all_reduce(timed, out, inp)[1]
        columns[#columns] = library.name
        row[#row + 1] = library.ms or "-"
      end)
      rows[#rows + 1] = row
      at_largest = row
    end
    check:table(("milliseconds per call on %s (median of %d runs, slowest rank):"):format(
      H.count(ctx.world_size, "rank"), math.min(check.runs, SWEEP_RUNS)), columns, rows, "%.4f")

    -- Where each of the student's variants wins, and the verdict at the largest size.
    local wins = {}
    for _, row in ipairs(rows) do
      wins[#wins + 1] = ("%d: %s"):format(row[1], row[2] <= row[3] and "two_shot" or "ring")
    end
    check:say("the faster of yours, by size: %s", table.concat(wins, ", "))
    local largest = ("per call, %s"):format(H.count(at_largest[1], "float"))
    check:compare { what = "of two_shot " .. largest, runs = math.min(check.runs, SWEEP_RUNS), yours = at_largest[2],
                    reference = { name = 'ctx.ccl.all_reduce {variant = "two_shot"}', ms = at_largest[5] }, threshold = 1.2 }
    check:compare { what = "of ring " .. largest, runs = math.min(check.runs, SWEEP_RUNS), yours = at_largest[3],
                    reference = { name = 'ctx.ccl.all_reduce {variant = "ring"}', ms = at_largest[6] }, threshold = 1.2 }
  end,
}
