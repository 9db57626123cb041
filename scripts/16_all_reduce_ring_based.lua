-- 16_all_reduce_ring_based: an all-reduce of an M x N matrix around a ring of ranks, tile by tile
-- (ctx.ccl.all_reduce, variant ring), with no GEMM: the collective of example 15 alone. Timed next to
-- ctx.ccl.all_reduce's two-shot variant and validated against it (every element); bandwidth is the
-- matrix's bytes per second.
-- usage: mpirun -np 2 iris-lua scripts/16_all_reduce_ring_based.lua [--m 8192] [--n 4608]
--        [--dtype bfloat16] [--blocks N] [--no-validate]    (--help: every option)
-- Iris's examples/16_all_reduce_ring_based; docs/collectives.md has the ring.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ex = require "ops_example"

ex.run {
  name = "16_all_reduce_ring_based",
  about = "an all-reduce of a matrix around a ring of ranks, tile by tile",
  fused_name = "ring: ctx.ccl.all_reduce, variant ring",
  shapes = function(o) return { a = { o.m, o.n }, c = { o.m, o.n } } end,
  bytes = function(o) return o.m * o.n end,
  fused = function(ctx, t, o) ctx.ccl.all_reduce(t.c, t.a, { variant = "ring", blocks = o.options.blocks }) end,
  bulk_name = "ctx.ccl.all_reduce, two_shot",
  bulk = function(ctx, t, o) ctx.ccl.all_reduce(t.expected, t.a, { variant = "two_shot", blocks = o.options.blocks }) end,
}
