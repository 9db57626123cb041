-- Lab 04's checker (docs/labs/04-messages.md): streams of chunks from every rank to the next through a
-- mailbox of a few slots, with credits flowing back; every chunk of every stream checked on the
-- receiver; a stream timed next to the copy engine moving the same bytes in one copy. On the cpu
-- backend under the weak memory model, as lab 03.
local H = require "iris.lab.harness"

local HINT = "each chunk needs two flags: the sender raises ready[s] on the receiver after the chunk (a release: "
  .. "ctx.signal_set after __syncthreads()), the receiver waits for it (ctx.wait_until(ready + s, iris::Cmp::ge, seq)) "
  .. "before reading, then gives the slot back (done[s] on the sender), and the sender waits for that before it "
  .. "reuses the slot. A wait that gives up names the flag's address, the value it held and the value expected"
local SLOTS = 4
local PAUSE = 0.02

return H.define {
  number = 4,
  title = "message passing: a stream through a mailbox, flags and bounded waits",
  ranks = { min = 2, try = { 2, 4 } },
  needs_ranks_because = "a sender and a receiver",
  calls = { "send", "receive" },
  env = { IRIS_CPU_MEMORY_MODEL = "weak" },
  run = function(check, lab)
    local ctx = check.ctx
    local W, me = ctx.world_size, ctx.rank
    local chunk = check:size(256, 64 * 1024)
    local box = { slots = ctx:zeros(SLOTS * chunk), ready = ctx:zeros(SLOTS, "uint64"), done = ctx:zeros(SLOTS, "uint64") }
    local sent = {} -- chunks each rank has received so far: the next stream's first sequence number is one more

    -- One stream of `count` chunks from `sender` to the next rank; every other rank waits.
    -- `pause`: seconds the sender waits first, so that a receiver that does not wait is caught.
    local function stream(sender, data, out, pause)
      local receiver = (sender + 1) % W
      local first = (sent[receiver] or 0) + 1
      sent[receiver] = first - 1 + data:numel() / chunk
      if me == sender then
        if pause then check:pause(pause) end
        lab.send(data, box, receiver, first)
      elseif me == receiver then
        lab.receive(out, box, sender, first)
      end
    end

    for _, count in ipairs { 1, SLOTS, 3 * SLOTS + 1 } do
      check:step(("streams of %s of %d floats, from every rank to the next"):format(H.count(count, "chunk"), chunk),
        function()
        local data = ctx:rand(count * chunk, "float32", check:seed("stream " .. count))
        local out = ctx:zeros(count * chunk)
        for sender = 0, W - 1 do
          out:fill(H.SENTINEL)
          ctx:barrier()
          stream(sender, data, out, PAUSE)
          ctx:barrier()
          if me == (sender + 1) % W then
            check:expect(out, data:peer(sender), ("out after a stream from rank %d"):format(sender))
          end
        end
      end, HINT)
    end

    local count = check:size(32, 64)
    local data, out = ctx:rand(count * chunk, "float32", check:seed("timed")), ctx:zeros(count * chunk)
    local REFERENCE = "one copy by the copy engine"
    local results
    check:step(("a stream of %d chunks from rank 0 to rank 1 and one copy of the same bytes by the copy engine, %d "
      .. "interleaved timed rounds, every run checked"):format(count, check.runs), function()
      results = check:time_together({
        { name = "yours", call = function() stream(0, data, out) end },
        { name = REFERENCE, call = function() if me == 1 then out:copy(data:peer(0)) end end },
      }, {
        -- One stream a run: streams follow each other only once the last one was received.
        reset = function() out:fill(H.SENTINEL) end,
        verify = function(label) if me == 1 then check:expect(out, data:peer(0), "out after " .. label) end end,
      })
    end, HINT)
    check:compare { what = ("of a stream of %d chunks of %d floats (%d slots)"):format(count, chunk, SLOTS),
                    yours = results.yours, reference = { name = REFERENCE, result = results[REFERENCE] }, threshold = 72 }
  end,
}
