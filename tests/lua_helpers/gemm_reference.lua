-- Inputs and host references for the GEMM and ctx.ops tests (tests/lua/gemm_device.lua, ops_*.lua).
-- Elements are -1, 0 or 1 (a function of rank, index and a salt), so every product and every sum the
-- tests make is a small whole number, exact in float16, bfloat16 (up to 256), tf32 and float32: results
-- are compared for equality whatever order the hardware sums in.
local ref = require "ccl_reference"

local M = {}

M.dtypes = { "float16", "bfloat16", "float32" }

function M.value(rank, i, salt) return (rank * 5 + i * 7 + (salt or 0) * 3) % 3 - 1 end

-- A rows x cols matrix (a Lua array, row-major) of rank's values.
function M.values(rank, rows, cols, salt)
  local v = {}
  for i = 0, rows * cols - 1 do v[i + 1] = M.value(rank, i, salt) end
  return v
end

-- Fills the matrix t (any view) with `values`.
function M.fill(t, values) ref.fill(t, function(i) return values[i + 1] end) end

-- a (m x k) times b (k x n), row-major arrays.
function M.matmul(a, b, m, n, k)
  local c = {}
  for i = 0, m - 1 do
    for j = 0, n - 1 do
      local s = 0
      for kk = 0, k - 1 do s = s + a[i * k + kk + 1] * b[kk * n + j + 1] end
      c[i * n + j + 1] = s
    end
  end
  return c
end

-- Element-wise sum of arrays.
function M.add(into, c)
  for i = 1, #c do into[i] = (into[i] or 0) + c[i] end
  return into
end

-- Checks the matrix t against `expected` (a row-major array).
function M.check(ctx, t, expected, what)
  ref.check(ctx, t, function(i) return expected[i + 1] end, what)
end

return M
