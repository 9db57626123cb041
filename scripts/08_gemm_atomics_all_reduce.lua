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
  base = ex.ALL_REDUCE,
  variants = { "atomic", "spinlock" },
}
