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
    local function timed(call)
      return check:time(call, {
        reset = function() out:fill(H.SENTINEL) end,
        verify = function(run) check:expect(out, expected, ("out after timed run %d"):format(run)) end,
      })
    end
    local yours, reference, auto, others
    check:step(("all_reduce: %d timed runs of %s, each checked"):format(check.runs, H.count(n, "float")), function()
      yours = timed(function() lab.all_reduce(out, inp) end)
    end, HINT)
    check:step("references: ctx.ccl.all_reduce (one_shot and auto) and the library, timed and checked the same way",
      function()
        check:need("ccl", "ctx.ccl (the collectives)")
        reference = timed(function() ctx.ccl.all_reduce(out, inp, { variant = "one_shot" }) end)
        auto = timed(function() ctx.ccl.all_reduce(out, inp) end)
        others = check:library_all_reduce(timed, out, inp)
      end)
    table.insert(others, 1, { name = "ctx.ccl.all_reduce (variant auto)", ms = auto })
    check:compare { what = ("per call, %s on %s"):format(H.count(n, "float"), H.count(ctx.world_size, "rank")),
                    yours = yours, reference = { name = 'ctx.ccl.all_reduce {variant = "one_shot"}', ms = reference },
                    threshold = 1.2, others = others }
  end,
}
