-- 00_load: one rank at a time reads another rank's buffer (ctx.get_block or ctx.load), GB/s for every pair against the copy engine.
-- usage: mpirun -np 2 iris-lua scripts/00_load.lua [--size 1GiB] [--dtype float32] [--method block|element]
--        [--iters 10] [--warmup 2] [--grid 2112] [--block 512] [--no-validate]    (--help: every option)
-- Iris's examples/00_load: rank `reader` pulls rank `owner`'s buffer into its own; row = reader, column = owner.
package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local patterns = require "patterns"

local opts = patterns.options(arg, {
  name = "00_load",
  about = "one rank at a time reads another rank's buffer; GB/s for every pair against the copy engine",
  dtypes = patterns.DATA_DTYPES,
  methods = patterns.LOAD_METHODS,
  defaults = patterns.DATA_DEFAULTS,
})
if not opts then return end -- --help

local ctx = iris.init { heap_size = patterns.heap_size(2 * opts.bytes) }
local mod = iris.compile(patterns.source(opts.dtype, [[
// Reads `peer`'s src element by element (Iris's iris.load) into this rank's dst.
__global__ void load_elements(const T* src, T* dst, size_t n, iris::Context ctx, int peer) {
  for (size_t i = first_index(); i < n; i += grid_stride()) dst[i] = ctx.load(src + i, peer);
}
// Reads `peer`'s src into this rank's dst, each block its own part, with 16-byte accesses.
__global__ void load_blocks(const T* src, T* dst, size_t n, iris::Context ctx, int peer) {
  size_t start, count;
  block_share(n, &start, &count);
  ctx.get_block(src + start, dst + start, count, peer);
}
]]))
local load = opts.method == "element" and mod.load_elements or mod.load_blocks

local n, world = opts.elements, ctx.world_size
local src = ctx:empty(n, opts.dtype) -- what each rank offers: its own pattern
local dst = ctx:zeros(n, opts.dtype) -- where the reading rank puts what it read
patterns.fill(mod, src, ctx.rank)
local check = patterns.checker(ctx, mod)
local cfg = { grid = opts.grid, block = opts.block }

patterns.print_header(ctx, opts, "rank ROW reads rank COLUMN's buffer into its own",
  ("%s %s per read, %s, %d blocks x %d threads"):format(patterns.human_bytes(opts.bytes), opts.dtype,
    opts.method == "element" and "ctx.load per element" or "ctx.get_block", opts.grid, opts.block))
local mine = {} -- this rank's row: its reads, by the rank read
local progress = iris.progress(world * world)
for reader, owner in patterns.pairs(world) do
  progress:step("%d reads %d", reader, owner)
  local me = ctx.rank == reader
  if me then dst:fill(0) end
  local ms = patterns.time(ctx, opts, function()
    if me then load:launch(cfg, src, dst, n, ctx, owner) end
  end)
  if me and opts.validate then check(dst, { rank = owner }, ("rank %d's read of rank %d"):format(reader, owner)) end
  -- The reference, the same bytes the same way: the copy engine from owner's heap into this one.
  local copy_gbs = patterns.copy_engine_gbs(ctx, opts, reader, dst, reader, src, owner)
  if me then mine[owner] = { gbs = patterns.gbs(opts.bytes, ms), copy_gbs = copy_gbs } end
end
progress:finish()

local all = patterns.gather_rows(ctx, mine)
patterns.print_bandwidth(ctx, all, {
  kernel = "load bandwidth, GB/s (row: reading rank, column: rank read)",
  copy = "copy engine, GB/s (iris_copy_device from the column's heap to the row's; diagonal: local copy)",
  ratio = "load / copy engine",
})
patterns.write_files(ctx, opts, all)
patterns.print_validated(ctx, opts, ("every element of %d reads"):format(world * world))
