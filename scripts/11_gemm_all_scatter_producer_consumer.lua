-- 11_gemm_all_scatter_producer_consumer: example 07's all-scatter as producer and consumer over flags:
-- producers (GEMM blocks) store each finished tile locally and release its flag, consumers (--comm_blocks
-- blocks) acquire the flags in order and push the tiles to every rank. Iris runs the two as separate
-- kernels on two streams; iris-lua launches on one stream per rank, so here they are the two halves of
-- one kernel (ctx.ops.matmul_all_gather, variant specialized, as example 10, with more consumers by
-- default); docs/ops.md says why. Validated against a plain GEMM then ctx.ccl.all_gather.
-- usage: mpirun -np 2 iris-lua scripts/11_gemm_all_scatter_producer_consumer.lua [--m M] [--n N] [--k K]
--        [--dtype bfloat16] [--blocks N] [--comm_blocks 16] [--no-validate]    (--help: every option)
-- Iris's examples/11_gemm_all_scatter_producer_consumer.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "11_gemm_all_scatter_producer_consumer",
  about = "GEMM blocks produce tiles and release flags; consumer blocks acquire them and push to every rank",
  what = "ctx.ops.matmul_all_gather, dim 2, producers and consumers",
  comm_blocks = true,
  base = ex.ALL_SCATTER,
  fused = ex.all_scatter_specialized,
}
