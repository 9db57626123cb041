-- The symmetric heap: equal offsets on every rank, and every rank reading every peer's copy of a
-- tensor through the heap bases (on the cpu backend, plain pointers through the FFI).
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local ffi = require "ffi"
local check = require "check"
-- arg[1]: elements of the pattern each rank writes and every rank reads back (default 4096)
local n = tonumber(arg[1]) or 4096
local ctx = iris.init { heap_size = math.max(32 * 2 ^ 20, n * 4 + 2 ^ 20) }
local rank, world = ctx.rank, ctx.world_size

check.equal(ctx:get_rank(), rank, "get_rank")
check.equal(ctx:get_num_ranks(), world, "get_num_ranks")
check.equal(iris.rank(), rank, "iris.rank")
check.equal(ctx.backend, os.getenv("IRIS_BACKEND") or ctx.backend, "backend")

local bases = ctx:heap_bases()
check.equal(bases.dtype, "uint64", "heap bases dtype")
check.same_list(bases:shape(), { world }, "heap bases shape")
check.equal(bases:offset(), 0, "the heap bases table is at offset 0")
check.equal(bases, ctx:heap_bases(), "the same heap bases tensor every call")
-- this rank's own entry is where its tensors live
local probe = ctx:zeros(1)
check.equal(tonumber(ffi.cast("uintptr_t", probe:data_ptr())), bases:get(rank + 1) + probe:offset(), "own base")

-- every dtype, several shapes: the same offset everywhere
for i, dtype in ipairs(iris.dtypes) do
  local t = ctx:zeros({ i, 3 }, dtype)
  check.same_on_all_ranks(ctx, t:offset(), dtype .. " offset")
  check.equal(t:offset() % 256, 0, "256-byte alignment")
end

-- each rank writes its pattern, then reads every peer's copy through its mapping of that peer's heap
local t = ctx:empty(n, "int32")
local pattern = {}
for i = 1, n do pattern[i] = rank * 100000 + i end
t:copy(pattern)
ctx:barrier()
local tensor = require "iris.tensor"
for r = 0, world - 1 do
  local peer = tensor.peer_view(t, r):to_table()
  local wrong, first = 0, nil
  for i = 1, n do
    if peer[i] ~= r * 100000 + i then
      wrong = wrong + 1
      first = first or i
    end
  end
  check.equal(wrong, 0, ("elements of rank %d's copy wrong as rank %d reads them (first at %s)"):format(r, rank,
    tostring(first)))
end
if ctx.backend == "cpu" then -- the same through plain pointers: heap base + offset
  for r = 0, world - 1 do
    local peer = ffi.cast("int32_t*", bases:get(r + 1) + t:offset())
    local wrong = 0
    for i = 0, n - 1 do
      if peer[i] ~= r * 100000 + i + 1 then wrong = wrong + 1 end
    end
    check.equal(wrong, 0, ("elements of rank %d's copy wrong through a pointer from rank %d"):format(r, rank))
  end
end
ctx:barrier() -- every rank has checked before any rank changes a peer's copy
-- a write into the next rank's copy lands there
local next_rank = (rank + 1) % world
tensor.peer_view(t, next_rank):set(1, -1 - rank)
ctx:barrier()
check.equal(t:get(1), -1 - (rank + world - 1) % world, "written by the previous rank")
ctx:barrier()
if rank == 0 then print(("pattern of %d int32 checked on every rank's copy by every rank"):format(n)) end

-- a zeroed tensor is zero on every rank before any rank gets it: a rank that writes a peer's copy
-- right away never has its write wiped by that peer's late zeroing
for round = 1, 20 do
  local z = ctx:zeros(64, "int64")
  tensor.peer_view(z, next_rank):set(round, round)
  ctx:barrier()
  check.equal(z:get(round), round, "peer write survived the zeroing")
  z:free()
end

ctx:barrier()
if rank == 0 then print("heap_symmetry passed on " .. world .. " rank(s)") end
