-- 03_all_store: every rank writes its buffer into every other rank at the same time (ctx.put_block or ctx.store), GB/s per pair against the copy engine one pair at a time.
-- usage: mpirun -np 2 iris-lua scripts/03_all_store.lua [--size 1GiB] [--dtype float32] [--method block|element]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/03_all_store: one kernel per rank pushes to all the others at once; row = writer, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "03_all_store",
  about = "every rank writes its buffer into every other rank at the same time; GB/s per pair against the copy engine",
  dtypes = patterns.DATA_DTYPES,
  methods = patterns.STORE_METHODS,
  defaults = patterns.DATA_DEFAULTS,
  help = { size = "bytes written to each other rank: 1048576, 256MiB, 1GiB", grid = "blocks per launch for each other rank" },
})
if not opts then return end -- --help
patterns.require_ranks(2)

local world = iris.world_size()
local ctx = iris.init { heap_size = patterns.heap_size((1 + world) * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Consecutive blocks serve different ranks, so that every peer is written to throughout the launch:
// block b writes to the (b % others)-th other rank, as part b / others of this rank's share.
__device__ int peer_of_block(iris::Context ctx) {
  return (ctx.rank + 1 + blockIdx.x % (ctx.world_size - 1)) % ctx.world_size;
}
// This rank's src goes to row `ctx.rank` of every peer's rows, element by element (Iris's iris.store).
__global__ void store_all_elements(const T* src, T* rows, size_t n, iris::Context ctx) {
  const int others = ctx.world_size - 1, peer = peer_of_block(ctx);
  const size_t part = blockIdx.x / others, parts = gridDim.x / others;
  for (size_t i = part * blockDim.x + threadIdx.x; i < n; i += parts * blockDim.x) ctx.store(rows + ctx.rank * n + i, src[i], peer);
}
// The same with the block copy: each block its part of src to one peer, with 16-byte accesses.
__global__ void store_all_blocks(const T* src, T* rows, size_t n, iris::Context ctx) {
  const int others = ctx.world_size - 1, peer = peer_of_block(ctx);
  size_t start, count;
  share(n, blockIdx.x / others, gridDim.x / others, &start, &count);
  ctx.put_block(src + start, rows + ctx.rank * n + start, count, peer);
}
]]))
local store_all = opts.method == "element" and mod.store_all_elements or mod.store_all_blocks

local n, others = opts.elements, world - 1
local src = ctx:empty(n, opts.dtype) -- what each rank sends: its own pattern
local rows = ctx:zeros({ world, n }, opts.dtype) -- row r: what rank r wrote here
patterns.fill(mod, src, ctx.rank)
local check = patterns.checker(ctx, mod)
local function row(r) return rows:narrow(1, r + 1, 1) end

patterns.print_header(ctx, opts, "every rank writes its buffer into every other rank, all at once",
  ("%s %s to each, %s, %d blocks x %d threads per other rank"):format(patterns.human_bytes(opts.bytes), opts.dtype,
    opts.method == "element" and "ctx.store per element" or "ctx.put_block", opts.grid, opts.block))
local progress = iris.progress(1 + world * others)
progress:step("all ranks writing at once")
local ms = patterns.time(ctx, opts, function()
  store_all:launch({ grid = opts.grid * others, block = opts.block }, src, rows, n, ctx)
end)
-- Every rank checks what the others wrote into it (patterns.time ended with a barrier).
for writer = 0, world - 1 do
  if opts.validate and writer ~= ctx.rank then
    check(row(writer), { rank = writer }, ("rank %d's write into rank %d"):format(writer, ctx.rank))
  end
end
local mine = { total_gbs = patterns.gbs(opts.bytes * others, ms) }
-- The reference: the copy engine from this heap into each other rank's, one pair at a time.
for writer, owner in patterns.pairs(world, true) do
  progress:step("copy engine, %d writes to %d", writer, owner)
  local copy_gbs = patterns.copy_engine_gbs(ctx, opts, writer, row(writer), owner, src, writer)
  if ctx.rank == writer then mine[owner] = { gbs = patterns.gbs(opts.bytes, ms), copy_gbs = copy_gbs } end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_bandwidth(ctx, all, {
  kernel = "all-store bandwidth, GB/s, every pair at once (row: writing rank, column: rank written to)",
  copy = "copy engine, GB/s, one pair at a time (iris_copy_device from the row's heap to the column's)",
  ratio = "all-store / copy engine",
})
patterns.print_totals(ctx, all, "written")
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every element of %d writes"):format(world * others))
