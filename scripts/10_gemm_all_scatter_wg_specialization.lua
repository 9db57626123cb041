-- 10_gemm_all_scatter_wg_specialization: example 07's all-scatter with the blocks of one kernel split
-- in two: GEMM blocks store each finished tile locally and raise its flag; --comm_blocks blocks wait for
-- the flags and copy the tiles to the peers, so the GEMM blocks never wait on the links
-- (ctx.ops.matmul_all_gather, variant specialized); validated against a plain GEMM then
-- ctx.ccl.all_gather.
-- usage: mpirun -np 2 iris-lua scripts/10_gemm_all_scatter_wg_specialization.lua [--m M] [--n N] [--k K]
--        [--dtype bfloat16] [--blocks N] [--comm_blocks 16] [--no-validate]    (--help: every option)
-- Iris's examples/10_gemm_all_scatter_wg_specialization; docs/ops.md has the timeline.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "10_gemm_all_scatter_wg_specialization",
  about = "GEMM blocks flag finished tiles; communication blocks of the same kernel send them to every rank",
  what = "ctx.ops.matmul_all_gather, dim 2, specialized",
  comm_blocks = true,
  base = ex.ALL_SCATTER,
  fused = ex.all_scatter_specialized,
}
