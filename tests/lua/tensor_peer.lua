-- t:peer(rank): the same elements in another rank's heap, for host-driven copies between ranks.
local ctx = iris.init { heap_size = "32MiB" }
local W, me = ctx.world_size, ctx.rank

-- Rank r's tensor holds r * 100 + i at element i.
local function numbered(n)
  local t = ctx:zeros(n, "int32")
  local values = {}
  for i = 1, n do values[i] = me * 100 + i end
  t:copy(values)
  ctx:barrier()
  return t
end

iris.test("a peer view reads every rank's elements, a narrowed one too", function()
  local t = numbered(10)
  for r = 0, W - 1 do
    iris.assert_equal(t:peer(r):get(3), r * 100 + 3)
    iris.assert_equal(t:narrow(1, 4, 5):peer(r), { r * 100 + 4, r * 100 + 5, r * 100 + 6, r * 100 + 7, r * 100 + 8 })
  end
end)

iris.test("copies through peer views put into and get from another rank", function()
  local t, got = numbered(6), ctx:zeros(6, "int32")
  local next, previous = (me + 1) % W, (me - 1) % W
  got:copy(t:peer(next)) -- get
  iris.assert_equal(got, { next * 100 + 1, next * 100 + 2, next * 100 + 3, next * 100 + 4, next * 100 + 5, next * 100 + 6 })
  local inbox = ctx:full(6, -1, "int32")
  inbox:narrow(1, 2, 2):peer(next):copy(t:narrow(1, 1, 2)) -- put two elements into the next rank's inbox
  ctx:barrier()
  iris.assert_equal(inbox, { -1, previous * 100 + 1, previous * 100 + 2, -1, -1, -1 })
end)

iris.test("a peer view of a bad rank, or of a freed tensor, is an error", function()
  local t = ctx:zeros(4)
  for _, bad in ipairs { -1, W, 0.5, "1" } do
    local ok, err = pcall(t.peer, t, bad)
    assert(not ok and err:find(("t:peer%%(rank%%): rank is 0%%-based, from 0 to %d, got"):format(W - 1)), err)
  end
  t:free()
  local ok, err = pcall(t.peer, t, 0)
  assert(not ok and err:find("freed"), err)
end)
