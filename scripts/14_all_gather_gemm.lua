-- 14_all_gather_gemm: C = [A_0 ... A_(W-1)] B, where each rank holds a slice of A's columns (K split
-- among the ranks): the GEMM gathers the peers' slices as it goes (ctx.ops.all_gather_matmul: pull reads
-- them from the GEMM blocks; staged has --comm_blocks blocks copy them in ahead, flagging each piece);
-- timed next to ctx.ccl.all_gather of A followed by a plain GEMM, and validated against it.
-- usage: mpirun -np 2 iris-lua scripts/14_all_gather_gemm.lua [--m M] [--n N] [--k K] [--dtype bfloat16]
--        [--variant pull] [--blocks N] [--comm_blocks 16] [--no-validate]    (--help: every option)
-- Iris's examples/14_all_gather_gemm; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "14_all_gather_gemm",
  about = "C = A B with A's columns spread over the ranks, gathered by the GEMM as it goes",
  what = "ctx.ops.all_gather_matmul",
  variants = { "pull", "staged" },
  comm_blocks = true,
  shapes = function(o, W)
    local k = ex.divides(o.k, W, "--k")
    return { a = { o.m, k }, b = { o.k, o.n }, c = { o.m, o.n }, bulk = { o.m, o.k } }
  end,
  fused = function(ctx, t, o) ctx.ops.all_gather_matmul(t.c, t.a, t.b, o.options) end,
  bulk_name = "ctx.ccl.all_gather of A (dim 2), then ctx.ops.matmul",
  bulk = function(ctx, t, o)
    ctx.ccl.all_gather(t.bulk, t.a, { dim = 2 })
    ctx.ops.matmul(t.expected, t.bulk, t.b, { blocks = o.options.blocks })
  end,
}
