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
local SWEEP_RUNS = 5 -- rounds per size (fewer than --runs: the sweep times six subjects at four sizes)

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
    -- (the subjects' names are the columns' names: results[columns[k]])
    local rows, at_largest = {}, {}
    local rounds = math.min(check.runs, SWEEP_RUNS)
    for _, n in ipairs(sizes) do
      local inp, expected = check:sum_inputs(n, "sweep " .. n)
      local out = ctx:zeros(n)
      local results, library
      -- Every variant, yours and ctx.ccl's, and the library's, timed the same way, interleaved.
      check:step(("%s: yours, ctx.ccl.all_reduce's and the library's, %d interleaved timed rounds, every run checked")
        :format(H.count(n, "float"), rounds), function()
        check:need("ccl", "ctx.ccl (the collectives)")
        local subjects = {}
        for _, v in ipairs(variants) do
          subjects[#subjects + 1] = { name = "your " .. v[1], call = function() lab[v[1]](out, inp) end }
        end
        for _, variant in ipairs { "one_shot", "two_shot", "ring" } do
          subjects[#subjects + 1] = { name = "ccl " .. variant,
            call = function() ctx.ccl.all_reduce(out, inp, { variant = variant }) end }
        end
        library = check:library_all_reduce(out, inp)
        if library then subjects[#subjects + 1] = library end
        results = check:time_together(subjects, {
          runs = rounds, -- one call a run: a ring's next call may not overwrite stages a peer still reads
          reset = function() out:fill(H.SENTINEL) end,
          verify = function(label) check:expect(out, expected, "out after " .. label) end,
        })
      end, ("two_shot: %s. ring: %s"):format(TWO_SHOT_HINT, RING_HINT))
      if library then columns[#columns] = library.name end
      local row = { n }
      for k = 2, #columns - 1 do row[k] = results[columns[k]] end
      row[#columns] = library and results[library.name] or "-"
      rows[#rows + 1] = row
      at_largest = row
    end
    local printed = {}
    for i, row in ipairs(rows) do
      printed[i] = { row[1] }
      for k = 2, #row do printed[i][k] = type(row[k]) == "table" and row[k].median or row[k] end
    end
    check:table(("milliseconds per call on %s (the slowest rank's median of %d interleaved rounds):"):format(
      H.count(ctx.world_size, "rank"), rounds), columns, printed, "%.4f")

    -- Where each of the student's variants wins, and the verdict at the largest size.
    local wins = {}
    for _, row in ipairs(rows) do
      wins[#wins + 1] = ("%d: %s"):format(row[1], row[2].median <= row[3].median and "two_shot" or "ring")
    end
    check:say("the faster of yours, by size: %s", table.concat(wins, ", "))
    local largest = ("per call, %s"):format(H.count(at_largest[1], "float"))
    check:compare { what = "of two_shot " .. largest, yours = at_largest[2], yours_name = "your two_shot",
                    reference = { name = 'ctx.ccl.all_reduce {variant = "two_shot"}', result = at_largest[5] },
                    threshold = 2.05 }
    check:compare { what = "of ring " .. largest, yours = at_largest[3], yours_name = "your ring",
                    reference = { name = 'ctx.ccl.all_reduce {variant = "ring"}', result = at_largest[6] },
                    threshold = 1.2 }
  end,
}
