-- 08_gemm_atomics_all_reduce: C = the sum over the ranks of A_r B_r, where each rank holds a slice of K (its columns of A
-- and rows of B): the GEMM's partial tiles are reduced across the ranks as they are computed
-- (ctx.ops.matmul_all_reduce, variant atomic by default); timed next to a plain GEMM followed by
-- ctx.ccl.all_reduce, and validated against it.
-- usage: mpirun -np 2 iris-lua scripts/08_gemm_atomics_all_reduce.lua [--m 8192] [--n 4608] [--k 36864]
--        [--dtype bfloat16] [--variant atomic] [--blocks N] [--no-validate]    (--help: every option)
-- Iris's examples/08_gemm_atomics_all_reduce; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "08_gemm_atomics_all_reduce",
  about = "C = sum over the ranks of A_r B_r, each tile added atomically into every rank's C as it is done",
  what = "ctx.ops.matmul_all_reduce",
  variants = { "atomic", "spinlock" },
  shapes = function(o, W)
    local k = ex.divides(o.k, W, "--k")
    return { a = { o.m, k }, b = { k, o.n }, c = { o.m, o.n }, bulk = { o.m, o.n } }
  end,
  fused = function(ctx, t, o) ctx.ops.matmul_all_reduce(t.c, t.a, t.b, o.options) end,
  bulk_name = "ctx.ops.matmul, then ctx.ccl.all_reduce",
  bulk = function(ctx, t, o)
    ctx.ops.matmul(t.bulk, t.a, t.b, { blocks = o.options.blocks })
    ctx.ccl.all_reduce(t.expected, t.bulk)
  end,
}
