-- Lab 08's checker (docs/labs/08-gemm.md): a GEMM whose rows of A are split among the ranks and whose
-- tiles of C go to every rank as they finish (a GEMM fused with an all-gather); every rank's whole C
-- checked against the product computed on the host, at shapes with ragged edges; timed next to a plain
-- GEMM followed by ctx.ccl.all_gather, and (its reference) next to ctx.ops.matmul_all_gather (issue 16;
-- an iris-lua without ctx.ops says so in the last check, and the lab does not pass).
local ffi = require "ffi"
local H = require "iris.lab.harness"

local HINT = "a tile of C is a sum over rounds of TILE columns of A times TILE rows of B: load both tiles into "
  .. "shared memory (0 outside the matrices: the edges are ragged), __syncthreads(), accumulate, __syncthreads(); "
  .. "then store the finished element into every rank's C at row ctx.rank * m + row (ctx.store(at, acc, r))"

-- The bulk-synchronous way, for comparison: a plain GEMM (a thread per element of this rank's rows)
-- into a local block of rows, then the library's all-gather.
local PLAIN_GEMM = [[
__global__ void lab_plain_gemm(const float* a, const float* b, float* c, int m, int n, int k) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int kk = 0; kk < k; ++kk) acc += a[(long)row * k + kk] * b[(long)kk * n + col];
  c[(long)row * n + col] = acc;
}
]]

-- Every rank's A (m x k, its own numbers), the shared B (k x n), and C = A_all B on the host.
local function problem(check, m, n, k, tag)
  local ctx = check.ctx
  local W = ctx.world_size
  local a = ctx:randint(-8, 8, { m, k }, "float32", check:seed(tag .. " a"))
  local b = ctx:randint(-8, 8, { k, n }, "float32", { seed = check:seed(tag .. " b"), shared = true })
  local bt = b:to_table()
  local bd = ffi.new("double[?]", k * n)
  for i = 1, k * n do bd[i - 1] = bt[i] end
  local product = {}
  for r = 0, W - 1 do
    local at = a:peer(r):to_table()
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        local acc = 0
        for kk = 0, k - 1 do acc = acc + at[i * k + kk + 1] * bd[kk * n + j] end
        product[(r * m + i) * n + j + 1] = acc
      end
    end
  end
  local expected = ctx:empty({ W * m, n })
  expected:copy(product)
  return { a = a, b = b, c = ctx:full({ W * m, n }, H.SENTINEL), expected = expected, m = m, n = n, k = k }
end

return H.define {
  number = 8,
  title = "a GEMM whose tiles go to the other ranks as they finish",
  ranks = { min = 1, try = { 2, 4 } },
  calls = { "gemm_all_gather" },
  run = function(check, lab)
    local ctx = check.ctx
    for _, shape in ipairs { { 1, 1, 1 }, { 20, 37, 29 }, { 33, 50, 70 } } do
      check:step(("gemm_all_gather: A %d x %d per rank, B %d x %d"):format(shape[1], shape[3], shape[3], shape[2]),
        function()
        local p = problem(check, shape[1], shape[2], shape[3], ("%d %d %d"):format(shape[1], shape[2], shape[3]))
        lab.gemm_all_gather(p.c, p.a, p.b)
        ctx:barrier()
        check:expect(p.c, p.expected, "c after lab.gemm_all_gather (row r * m + i holds rank r's row i)")
      end, HINT)
    end

    local shape = check:size({ 64, 64, 64 }, { 256, 512, 256 })
    local p = problem(check, shape[1], shape[2], shape[3], "timed")
    local local_rows = ctx:zeros({ p.m, p.n })
    local plain = iris.compile(PLAIN_GEMM).lab_plain_gemm
    local what = ("per call, A %d x %d per rank, B %d x %d"):format(p.m, p.k, p.k, p.n)
    local REFERENCE, BULK = "ctx.ops.matmul_all_gather", "a plain GEMM, then ctx.ccl.all_gather"
    local results
    check:step(("gemm_all_gather: yours, the bulk-synchronous way and ctx.ops.matmul_all_gather, %d interleaved timed "
      .. "rounds, every run checked"):format(check.runs), function()
      check:need("ccl", "ctx.ccl (the collectives)")
      check:need("ops", "ctx.ops (issue 16: GEMMs fused with communication; its matmul_all_gather is this lab's "
        .. "reference)")
      results = check:time_together({
        { name = "yours", call = function() lab.gemm_all_gather(p.c, p.a, p.b) end },
        { name = BULK, call = function()
          plain:launch({ grid = { iris.cdiv(p.n, 16), iris.cdiv(p.m, 16) }, block = { 16, 16 } }, p.a, p.b, local_rows,
            p.m, p.n, p.k)
          ctx.ccl.all_gather(p.c, local_rows)
        end },
        { name = REFERENCE, call = function() ctx.ops.matmul_all_gather(p.c, p.a, p.b) end },
      }, {
        -- One call a run: yours may signal its tiles with flags that a next call must not overtake.
        reset = function() p.c:fill(H.SENTINEL) end,
        verify = function(label) check:expect(p.c, p.expected, "c after " .. label) end,
      })
    end, HINT)
    check:compare { what = what, yours = results.yours, reference = { name = REFERENCE, result = results[REFERENCE] },
                    threshold = 1.2, others = { { name = BULK, result = results[BULK] } } }
  end,
}
