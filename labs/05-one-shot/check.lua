-- Lab 05's checker (docs/labs/05-one-shot.md): the student's one-shot all-reduce at several sizes, every
-- rank's result checked; then timed (every run checked) next to ctx.ccl.all_reduce's one_shot (the
-- reference), its automatic choice, and the backend's library (NCCL, RCCL, or MPI on the cpu backend).
local H = require "iris.lab.harness"

local HINT = "every rank reads element i of every rank's inp, its own included: sum += ctx.load(inp + i, r) for r "
  .. "in 0 .. ctx.world_size - 1, then out[i] = sum on this rank only (every rank computes its own out)"

return H.define {
  number = 5,
  title = "a one-shot all-reduce, next to ctx.ccl.all_reduce and NCCL",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "all_reduce" },
  run = function(check, lab)
    local ctx = check.ctx
    for _, n in ipairs { 1, 1000, 4099, check:size(16387, 1048579) } do
      check:step(("all_reduce of %s on every rank"):format(H.count(n, "float")), function()
        local inp, expected = check:sum_inputs(n, "size " .. n)
        local out = ctx:full(n, H.SENTINEL)
        lab.all_reduce(out, inp)
        ctx:barrier()
        check:expect(out, expected, "out after lab.all_reduce")
      end, HINT)
    end

    local n = check:size(16384, 4 * 1024 * 1024)
    local inp, expected = check:sum_inputs(n, "timed")
    local out = ctx:zeros(n)
    -- Yours and the references, timed the same way, interleaved (H: Check:time_together); every run checked.
    local results, notes
    local REFERENCE, AUTO = 'ctx.ccl.all_reduce {variant = "one_shot"}', "ctx.ccl.all_reduce (variant auto)"
    check:step(("all_reduce: yours and the references, %d interleaved timed rounds of %s, every run checked"):format(
      check.runs, H.count(n, "float")), function()
      check:need("ccl", "ctx.ccl (the collectives)")
      local subjects = {
        { name = "yours", call = function() lab.all_reduce(out, inp) end },
        { name = REFERENCE, call = function() ctx.ccl.all_reduce(out, inp, { variant = "one_shot" }) end },
        { name = AUTO, call = function() ctx.ccl.all_reduce(out, inp) end },
      }
      local library
      library, notes = check:library_all_reduce(out, inp)
      if library then subjects[#subjects + 1] = library end
      results = check:time_together(subjects, {
        back_to_back = true, -- an all-reduce may follow the last one at once (its inputs are not changed)
        reset = function() out:fill(H.SENTINEL) end,
        verify = function(label) check:expect(out, expected, "out after " .. label) end,
      })
      if library then table.insert(notes, 1, { name = library.name, result = results[library.name] }) end
    end, HINT)
    table.insert(notes, 1, { name = AUTO, result = results[AUTO] })
    check:compare { what = ("per call, %s on %s"):format(H.count(n, "float"), H.count(ctx.world_size, "rank")),
                    yours = results.yours, reference = { name = REFERENCE, result = results[REFERENCE] },
                    threshold = 1.2, others = notes }
  end,
}
