-- 15_gemm_all_reduce_ring_based: C = the sum over the ranks of A_r B_r, where each rank holds a slice of K (its columns of A
-- and rows of B): the GEMM's partial tiles are reduced across the ranks as they are computed
-- (ctx.ops.matmul_all_reduce, variant ring by default); timed next to a plain GEMM followed by
-- ctx.ccl.all_reduce, and validated against it.
-- usage: mpirun -np 2 iris-lua scripts/15_gemm_all_reduce_ring_based.lua [--m 8192] [--n 4608] [--k 36864]
--        [--dtype bfloat16] [--variant ring] [--blocks N] [--no-validate]    (--help: every option)
-- Iris's examples/15_gemm_all_reduce_ring_based; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "15_gemm_all_reduce_ring_based",
  about = "C = sum over the ranks of A_r B_r, tiles passed around a ring of ranks as they are done",
  base = ex.ALL_REDUCE,
  variants = { "ring" },
}
