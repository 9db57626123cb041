-- 01_store: one rank at a time writes its buffer into another rank's (ctx.put_block or ctx.store), GB/s for every pair against the copy engine.
-- usage: mpirun -np 2 iris-lua scripts/01_store.lua [--size 1GiB] [--dtype float32] [--method block|element]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/01_store: rank `writer` pushes its buffer into rank `owner`'s inbox; row = writer, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "01_store",
  about = "one rank at a time writes its buffer into another rank's; GB/s for every pair against the copy engine",
  dtypes = patterns.DATA_DTYPES,
  methods = patterns.STORE_METHODS,
  defaults = patterns.DATA_DEFAULTS,
})
if not opts then return end -- --help

local ctx = iris.init { heap_size = patterns.heap_size(2 * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Writes this rank's src into `peer`'s inbox element by element (Iris's iris.store).
__global__ void store_elements(const T* src, T* inbox, size_t n, iris::Context ctx, int peer) {
  for (size_t i = first_index(); i < n; i += grid_stride()) ctx.store(inbox + i, src[i], peer);
}
// Writes this rank's src into `peer`'s inbox, each block its own part, with 16-byte accesses.
__global__ void store_blocks(const T* src, T* inbox, size_t n, iris::Context ctx, int peer) {
  size_t start, count;
  block_share(n, &start, &count);
  ctx.put_block(src + start, inbox + start, count, peer);
}
]]))
local store = opts.method == "element" and mod.store_elements or mod.store_blocks

local n, world = opts.elements, ctx.world_size
local src = ctx:empty(n, opts.dtype) -- what each rank sends: its own pattern
local inbox = ctx:zeros(n, opts.dtype) -- where the receiving rank gets it
patterns.fill(mod, src, ctx.rank)
local check = patterns.checker(ctx, mod)
local cfg = { grid = opts.grid, block = opts.block }

patterns.print_header(ctx, opts, "rank ROW writes its buffer into rank COLUMN's",
  ("%s %s per write, %s, %d blocks x %d threads"):format(patterns.human_bytes(opts.bytes), opts.dtype,
    opts.method == "element" and "ctx.store per element" or "ctx.put_block", opts.grid, opts.block))
local mine = {} -- this rank's row: its writes, by the rank written to
local progress = iris.progress(world * world)
for writer, owner in patterns.pairs(world) do
  progress:step("%d writes to %d", writer, owner)
  local me = ctx.rank == writer
  if ctx.rank == owner then inbox:fill(0) end -- (patterns.time starts with a barrier)
  local ms = patterns.time(ctx, opts, function()
    if me then store:launch(cfg, src, inbox, n, ctx, owner) end
  end)
  -- The owner checks what arrived: patterns.time ended with a barrier, after the writer's kernels.
  if ctx.rank == owner and opts.validate then
    check(inbox, { rank = writer }, ("rank %d's write into rank %d"):format(writer, owner))
  end
  -- The reference, the same bytes the same way: the copy engine from this heap into owner's.
  local copy_gbs = patterns.copy_engine_gbs(ctx, opts, writer, inbox, owner, src, writer)
  if me then mine[owner] = { gbs = patterns.gbs(opts.bytes, ms), copy_gbs = copy_gbs } end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_bandwidth(ctx, all, {
  kernel = "store bandwidth, GB/s (row: writing rank, column: rank written to)",
  copy = "copy engine, GB/s (iris_copy_device from the row's heap to the column's; diagonal: local copy)",
  ratio = "store / copy engine",
})
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every element of %d writes"):format(world * world))
