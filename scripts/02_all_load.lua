-- 02_all_load: every rank reads every other rank's buffer at the same time (ctx.get_block or ctx.load), GB/s per pair against the copy engine one pair at a time.
-- usage: mpirun -np 2 iris-lua scripts/02_all_load.lua [--size 1GiB] [--dtype float32] [--method block|element]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/02_all_load: one kernel per rank pulls from all the others at once; row = reader, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "02_all_load",
  about = "every rank reads every other rank's buffer at the same time; GB/s per pair against the copy engine",
  dtypes = patterns.DATA_DTYPES,
  methods = patterns.LOAD_METHODS,
  defaults = patterns.DATA_DEFAULTS,
  help = { size = "bytes read from each other rank: 1048576, 256MiB, 1GiB", grid = "blocks per launch for each other rank" },
})
if not opts then return end -- --help
patterns.require_ranks(2)

local world = iris.world_size()
local ctx = iris.init { heap_size = patterns.heap_size((1 + world) * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Consecutive blocks serve different ranks, so that every peer is read from throughout the launch:
// block b reads from the (b % others)-th other rank, as part b / others of that rank's share.
__device__ int peer_of_block(iris::Context ctx) {
  return (ctx.rank + 1 + blockIdx.x % (ctx.world_size - 1)) % ctx.world_size;
}
// Row `peer` of this rank's rows receives `peer`'s src, element by element (Iris's iris.load).
__global__ void load_all_elements(const T* src, T* rows, size_t n, iris::Context ctx) {
  const int others = ctx.world_size - 1, peer = peer_of_block(ctx);
  const size_t part = blockIdx.x / others, parts = gridDim.x / others;
  for (size_t i = part * blockDim.x + threadIdx.x; i < n; i += parts * blockDim.x) rows[peer * n + i] = ctx.load(src + i, peer);
}
// The same with the block copy: each block its part of one peer's src, with 16-byte accesses.
__global__ void load_all_blocks(const T* src, T* rows, size_t n, iris::Context ctx) {
  const int others = ctx.world_size - 1, peer = peer_of_block(ctx);
  size_t start, count;
  share(n, blockIdx.x / others, gridDim.x / others, &start, &count);
  ctx.get_block(src + start, rows + peer * n + start, count, peer);
}
]]))
local load_all = opts.method == "element" and mod.load_all_elements or mod.load_all_blocks

local n, others = opts.elements, world - 1
local src = ctx:empty(n, opts.dtype) -- what each rank offers: its own pattern
local rows = ctx:zeros({ world, n }, opts.dtype) -- row r: what this rank read from rank r
patterns.fill(mod, src, ctx.rank)
local check = patterns.checker(ctx, mod)
local function row(r) return rows:narrow(1, r + 1, 1) end

patterns.print_header(ctx, opts, "every rank reads the buffer of every other rank, all at once",
  ("%s %s from each, %s, %d blocks x %d threads per other rank"):format(patterns.human_bytes(opts.bytes), opts.dtype,
    opts.method == "element" and "ctx.load per element" or "ctx.get_block", opts.grid, opts.block))
local progress = iris.progress(1 + world * others)
progress:step("all ranks reading at once")
local ms = patterns.time(ctx, opts, function()
  load_all:launch({ grid = opts.grid * others, block = opts.block }, src, rows, n, ctx)
end)
local mine = { total_gbs = patterns.gbs(opts.bytes * others, ms) }
for peer = 0, world - 1 do
  if peer ~= ctx.rank then
    if opts.validate then check(row(peer), { rank = peer }, ("rank %d's read of rank %d"):format(ctx.rank, peer)) end
    mine[peer] = { gbs = patterns.gbs(opts.bytes, ms) }
  end
end
-- The reference: the copy engine from each other rank's heap into this one, one pair at a time.
for reader, owner in patterns.pairs(world, true) do
  progress:step("copy engine, %d reads %d", reader, owner)
  local copy_gbs = patterns.copy_engine_gbs(ctx, opts, reader, row(owner), reader, src, owner)
  if ctx.rank == reader then mine[owner].copy_gbs = copy_gbs end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_bandwidth(ctx, all, {
  kernel = "all-load bandwidth, GB/s, every pair at once (row: reading rank, column: rank read)",
  copy = "copy engine, GB/s, one pair at a time (iris_copy_device from the column's heap to the row's)",
  ratio = "all-load / copy engine",
})
patterns.print_totals(ctx, all, "read")
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every element of %d reads"):format(world * others))
