-- Inputs and host references for the ctx.ccl tests (tests/lua/ccl_*.lua). Every rank can compute
-- every rank's input (a function of rank, element and dtype), so each checks its own result against a
-- reduction computed here, in Lua, without talking to the others. Inputs are small whole numbers (and
-- halves for products), so every dtype holds them and every result exactly: results are compared
-- for equality, whatever order a variant combines in.
local bit = require "bit"

local M = {}

M.dtypes = { "bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
  "float64" }
M.ops = { "sum", "prod", "min", "max", "band", "bor", "bxor" }
M.float_ops = { "sum", "prod", "min", "max" }

local function kind(dtype)
  if dtype == "bool" then return "bool" end
  if dtype:match("^float") or dtype == "bfloat16" then return "float" end
  if dtype:match("^uint") then return "unsigned" end
  return "signed"
end
M.kind = kind

function M.ops_for(dtype)
  return kind(dtype) == "float" and M.float_ops or M.ops
end

-- Input element i (0-based, row-major over the tensor's logical shape) of `rank` for `op`.
function M.value(dtype, op, rank, i, salt)
  local k = kind(dtype)
  local h = rank * 37 + i * 11 + (salt or 0) * 5
  if k == "bool" then return (h % 3 == 0) and 1 or 0 end
  if op == "prod" then
    local choices = k == "float" and { 1, 2, 0.5, -1 } or (k == "signed" and { 1, 2, 3, -1 } or { 1, 2, 3, 1 })
    return choices[h % 4 + 1]
  end
  if op == "band" or op == "bor" or op == "bxor" then return (rank * 91 + i * 57 + (salt or 0)) % 128 end
  if k == "unsigned" then return h % 60 end
  return h % 41 - 20
end

-- The reduction of `values` (a list, one per member) as the collective must compute it.
function M.reduce(dtype, op, values)
  local k = kind(dtype)
  local acc = values[1]
  for j = 2, #values do
    local v = values[j]
    if k == "bool" then
      if op == "sum" or op == "max" or op == "bor" then
        acc = (acc ~= 0 or v ~= 0) and 1 or 0
      elseif op == "bxor" then
        acc = (acc ~= 0) ~= (v ~= 0) and 1 or 0
      else
        acc = (acc ~= 0 and v ~= 0) and 1 or 0
      end
    elseif op == "sum" then
      acc = acc + v
    elseif op == "prod" then
      acc = acc * v
    elseif op == "min" then
      acc = math.min(acc, v)
    elseif op == "max" then
      acc = math.max(acc, v)
    elseif op == "band" then
      acc = bit.band(acc, v)
    elseif op == "bor" then
      acc = bit.bor(acc, v)
    else
      acc = bit.bxor(acc, v)
    end
  end
  return acc
end

-- What t:to_table() gives back for a value stored in `dtype`.
function M.as_read(dtype, v)
  if dtype == "bool" then return v ~= 0 end
  return v
end

-- Sets every element of t (any shape, views too) to fn(i), i the 0-based row-major index. In one
-- t:copy: on a GPU every t:set is a transfer of its own, and element by element these tests ran into
-- their time limits on a GPU that several ranks time-share.
function M.fill(t, fn)
  local values = {}
  for i = 1, t:numel() do values[i] = fn(i - 1) end
  t:copy(values)
end

-- Checks every element of t against expected(i); the error names the rank, what, the element, both
-- values and how many differ.
function M.check(ctx, t, expected, what)
  local got = t:to_table()
  local bad, first = 0, nil
  for i = 1, #got do
    local e = expected(i - 1)
    if got[i] ~= e then
      bad = bad + 1
      first = first or ("element %d: got %s, expected %s"):format(i, tostring(got[i]), tostring(e))
    end
  end
  if bad > 0 then
    error(("rank %d, %s: %d of %d elements differ; first at %s"):format(ctx.rank, what, bad, #got, first), 2)
  end
end

-- A 2-d view of rows x cols that is not contiguous (a window of a larger tensor).
function M.window(ctx, rows, cols, dtype)
  return ctx:zeros({ rows + 3, cols + 5 }, dtype):narrow(1, 2, rows):narrow(2, 3, cols)
end

-- The members of a group as a list (every rank when nil).
function M.members(ctx, group)
  if group then return group end
  local all = {}
  for r = 0, ctx.world_size - 1 do all[#all + 1] = r end
  return all
end

-- Why ctx.ops' variant "vendor" cannot run on these ranks (nil: it can), the same on every rank: its
-- collective library opened once here (NCCL and RCCL take one rank per GPU, so ranks sharing one under
-- CUDA MPS cannot; the cpu backend's MPI opens under mpirun). One rank needs no library.
function M.vendor_why(ctx)
  if ctx.world_size == 1 then return nil end
  local reference = require "iris.reference"
  local library = reference.open(ctx)
  if not library.handle then return library.why end
  reference.close(library)
  return nil
end

-- The arguments that are not nil, in order, as a list (a variant list with optional entries).
function M.present(...)
  local list = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then list[#list + 1] = v end
  end
  return list
end

return M
