-- 07_gemm_all_scatter: C = A B where each rank holds a block of B's columns, computes those columns of C
-- and stores every finished tile into every rank's C (ctx.ops.matmul_all_gather along dim 2), so all
-- ranks end with the whole C; timed next to a plain GEMM followed by ctx.ccl.all_gather, and validated
-- against it.
-- usage: mpirun -np 2 iris-lua scripts/07_gemm_all_scatter.lua [--m 8192] [--n 4608] [--k 36864]
--        [--dtype bfloat16] [--blocks N] [--no-validate]    (--help: every option)
-- Iris's examples/07_gemm_all_scatter; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "07_gemm_all_scatter",
  about = "each rank computes its columns of C = A B and stores each tile into every rank as it is done",
  what = "ctx.ops.matmul_all_gather, dim 2, push",
  base = ex.ALL_SCATTER,
  fused = function(ctx, t, o)
    ctx.ops.matmul_all_gather(t.c, t.a, t.b, { dim = 2, variant = "push", blocks = o.options.blocks })
  end,
}
