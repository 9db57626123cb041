-- Lab 02's checker (docs/labs/02-remote.md): remote loads and remote stores between every pair of
-- ranks, checked on every rank; then a bandwidth matrix of both against the copy engine.
local H = require "iris.lab.harness"

local READ_HINT = "dst[i] = ctx.load(src + i, from): the pointer is in your own heap, `from` says whose copy to read"
local WRITE_HINT = "ctx.store(dst + i, src[i], to): the pointer is in your own heap, `to` says whose copy to write"
local MATRIX_RUNS = 3 -- per pair: world_size^2 pairs, four kinds of copy

return H.define {
  number = 2,
  title = "remote loads and stores; a bandwidth matrix against the copy engine",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "read", "write" },
  run = function(check, lab)
    local ctx = check.ctx
    local W, me = ctx.world_size, ctx.rank
    local function data(n, tag) return ctx:rand(n, "float32", check:seed(tag)) end

    for _, n in ipairs { 1, 1001, 4099 } do
      check:step(("read: %s from each rank in turn"):format(H.count(n, "float")), function()
        local src, dst = data(n, "read " .. n), ctx:zeros(n)
        for shift = 0, W - 1 do
          local from = (me + shift) % W
          dst:fill(H.SENTINEL)
          ctx:barrier()
          lab.read(dst, src, from)
          ctx:barrier()
          check:expect(dst, src:peer(from), ("dst after lab.read(dst, src, %d)"):format(from))
        end
      end, READ_HINT)
      check:step(("write: %s into each rank in turn"):format(H.count(n, "float")), function()
        local src, dst = data(n, "write " .. n), ctx:zeros(n)
        for shift = 0, W - 1 do
          dst:fill(H.SENTINEL)
          ctx:barrier()
          lab.write(src, dst, (me + shift) % W)
          ctx:barrier()
          local writer = (me - shift) % W
          check:expect(dst, src:peer(writer), ("dst after rank %d's lab.write(src, dst, %d)"):format(writer, me))
        end
      end, WRITE_HINT)
    end

    -- The matrices: one pair at a time, the other ranks idle; every run checked on the rank written.
    local n = check:size(64 * 1024, 16 * 1024 * 1024)
    local src, dst = data(n, "bandwidth"), ctx:zeros(n)
    local function gbs(ms) return n * 4 / (ms * 1e-3) / 1e9 end
    -- One pair: yours and the copy engine's, timed the same way, interleaved (H: Check:time_together).
    local function pair(active, written, source_rank, yours, engine)
      local results = check:time_together({
        { name = "yours", call = function() if me == active then yours() end end },
        { name = "the copy engine", call = function() if me == active then engine() end end },
      }, {
        runs = math.min(check.runs, MATRIX_RUNS),
        back_to_back = true, -- the same copy again: it may follow the last one at once
        reset = function() if me == written then dst:fill(H.SENTINEL) end end,
        verify = function(label)
          if me == written then check:expect(dst, src:peer(source_rank), "dst after " .. label) end
        end,
      })
      return results.yours, results["the copy engine"]
    end
    local ms = { read = {}, read_ce = {}, write = {}, write_ce = {} }
    local function measure(kind, hint, row_pairs)
      check:step(("%s: bandwidth of every pair, yours and the copy engine's, every run checked"):format(kind), function()
        for row = 0, W - 1 do
          for _, key in ipairs { kind, kind .. "_ce" } do ms[key][row + 1] = {} end
          for col = 0, W - 1 do row_pairs(row, col) end
        end
      end, hint)
    end
    measure("read", READ_HINT, function(reader, owner)
      ms.read[reader + 1][owner + 1], ms.read_ce[reader + 1][owner + 1] = pair(reader, reader, owner,
        function() lab.read(dst, src, owner) end, function() dst:copy(src:peer(owner)) end)
    end)
    measure("write", WRITE_HINT, function(writer, target)
      ms.write[writer + 1][target + 1], ms.write_ce[writer + 1][target + 1] = pair(writer, target, writer,
        function() lab.write(src, dst, target) end, function() dst:peer(target):copy(src) end)
    end)

    local columns = { "" }
    for c = 0, W - 1 do columns[c + 2] = ("rank %d"):format(c) end
    local function matrix(title, key)
      local rows = {}
      for r = 1, W do
        rows[r] = { ("rank %d"):format(r - 1) }
        for c = 1, W do
          rows[r][c + 1] = ("%.2f / %.2f"):format(gbs(ms[key][r][c].median), gbs(ms[key .. "_ce"][r][c].median))
        end
      end
      check:table(title, columns, rows)
    end
    local size = ("%d floats (%.1f MiB)"):format(n, n * 4 / 2 ^ 20)
    matrix(("remote reads of %s, GB/s, yours / the copy engine's (row: the rank reading, column: the rank read; "
      .. "the diagonal is local)"):format(size), "read")
    matrix(("remote writes of %s, GB/s, yours / the copy engine's (row: the rank writing, column: the rank "
      .. "written)"):format(size), "write")

    -- Full marks: the median pair between different ranks (or the local copy, on one rank), by the ratio
    -- of yours to the copy engine's.
    local function median_pair(kind)
      local list = {}
      for r = 1, W do
        for c = 1, W do
          if r ~= c or W == 1 then
            list[#list + 1] = { yours = ms[kind][r][c], engine = ms[kind .. "_ce"][r][c],
              ratio = ms[kind][r][c].median / ms[kind .. "_ce"][r][c].median }
          end
        end
      end
      table.sort(list, function(a, b) return a.ratio < b.ratio end)
      return list[math.floor((#list + 1) / 2)]
    end
    for _, kind in ipairs { "read", "write" } do
      local median = median_pair(kind)
      check:compare { what = ("of a remote %s of %s, the median pair"):format(kind, size), yours = median.yours,
                      reference = { name = "the copy engine", result = median.engine }, threshold = 1.25 }
    end
  end,
}
