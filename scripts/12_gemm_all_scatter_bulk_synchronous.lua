-- 12_gemm_all_scatter_bulk_synchronous: example 07 without the overlap, as Iris's baseline: a GEMM
-- kernel computes this rank's columns of C, every rank waits at a barrier, then an all-scatter kernel
-- copies them to every rank (ctx.ops.matmul, ctx:barrier(), ctx.ccl.all_gather along dim 2); timed next
-- to the fused ctx.ops.matmul_all_gather and validated against it.
-- usage: mpirun -np 2 iris-lua scripts/12_gemm_all_scatter_bulk_synchronous.lua [--m M] [--n N] [--k K]
--        [--dtype bfloat16] [--blocks N] [--no-validate]    (--help: every option)
-- Iris's examples/12_gemm_all_scatter_bulk_synchronous; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "12_gemm_all_scatter_bulk_synchronous",
  about = "a GEMM of this rank's columns, a barrier, then an all-scatter of them to every rank",
  fused_name = "bulk-synchronous: ctx.ops.matmul, ctx:barrier(), all_gather",
  base = ex.ALL_SCATTER,
  -- The script's subject comes first; the fused op is what it is compared with and validated against.
  fused = function(ctx, t, o)
    ctx.ops.matmul(t.bulk, t.a, t.b, { blocks = o.options.blocks })
    ctx:synchronize()
    ctx:barrier()
    ctx.ccl.all_gather(t.c, t.bulk, { dim = 2 })
  end,
  bulk_name = "fused: ctx.ops.matmul_all_gather (dim 2)",
  bulk = function(ctx, t, o)
    ctx.ops.matmul_all_gather(t.expected, t.a, t.b, { dim = 2, blocks = o.options.blocks })
  end,
}
