-- patterns: what the pattern scripts (scripts/0*.lua, docs/patterns.md) share: their options, the
-- device prelude their kernels start with, timing, checking results, and printing the tables.
-- A script loads it relative to its own path:
--   package.path = (arg[0]:gsub("[^/]*$", "lib/?.lua;", 1)) .. package.path
local ffi = require "ffi"
local errors = require "iris.errors"
local C = ffi.C

local M = {}

---------------------------------------------------------------------------------------------------
-- Element types

M.CTYPES = {
  int8 = "int8_t", uint8 = "uint8_t", int16 = "int16_t", int32 = "int32_t", uint32 = "uint32_t",
  int64 = "int64_t", uint64 = "uint64_t", float16 = "iris::half", bfloat16 = "iris::bfloat16",
  float32 = "float", float64 = "double",
}
M.SIZES = {
  int8 = 1, uint8 = 1, int16 = 2, float16 = 2, bfloat16 = 2, int32 = 4, uint32 = 4, float32 = 4,
  int64 = 8, uint64 = 8, float64 = 8,
}
-- Data patterns move any of these (the pattern's values are small whole numbers, exact in all of them).
M.DATA_DTYPES = { "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
  "float64" }
-- The atomic dtypes of the device API (docs/device-api.md).
M.ADD_DTYPES = { "int32", "uint32", "int64", "uint64", "float32", "float64", "float16", "bfloat16" }
M.XCHG_DTYPES = { "int32", "uint32", "int64", "uint64", "float32", "float64" }

---------------------------------------------------------------------------------------------------
-- Options (read with iris.options: --csv and --json come with it)

M.usage_error = iris.options.usage_error
M.expects_gpu = iris.options.expects_gpu

local ORDER = { "size", "dtype", "method", "rounds", "iters", "warmup", "grid", "block" }
local HELP = {
  size = "bytes per buffer: 1048576, 256MiB, 1GiB",
  dtype = "element type",
  method = "how the kernel moves data",
  rounds = "operations per measurement",
  iters = "timed runs per measurement; the median is reported",
  warmup = "untimed runs before them",
  grid = "blocks per launch",
  block = "threads per block",
}

-- The defaults of the data patterns (00-03) and of the atomics (04, 05): on GPUs buffers far beyond
-- the last-level cache (50 MB on an H200), so that no run is served from it; small ones on cpu.
M.DATA_DEFAULTS = {
  cpu = { size = "256KiB", dtype = "float32", method = "block", iters = 3, warmup = 1, grid = 8, block = 64 },
  gpu = { size = "1GiB", dtype = "float32", method = "block", iters = 10, warmup = 2, grid = 2112, block = 512 },
}
M.ATOMIC_DEFAULTS = {
  cpu = { size = "64KiB", dtype = "int32", rounds = 100, iters = 3, warmup = 1, grid = 8, block = 64 },
  gpu = { size = "256MiB", dtype = "int32", rounds = 1000, iters = 10, warmup = 2, grid = 2112, block = 512 },
}
M.LOAD_METHODS = { block = "ctx.get_block, 16-byte reads by whole blocks (as Iris's block loads)",
  element = "ctx.load, one element per thread per step" }
M.STORE_METHODS = { block = "ctx.put_block, 16-byte writes by whole blocks (as Iris's block stores)",
  element = "ctx.store, one element per thread per step" }

-- Reads the script's options from `argv` against `spec` (through iris.options):
--   name, about         the script's name and one line on what it shows (for --help)
--   defaults            {cpu = {...}, gpu = {...}}: the defaults on the cpu backend and on GPUs; their
--                       keys are the options the script takes
--   dtypes              the dtypes --dtype accepts; methods: name -> description, for --method
--   help                key -> text, replacing the standard description of an option
-- Returns nil after printing the help (the script then ends), else the options: those of `spec`, plus
-- validate, plot, csv, json, gpu (which defaults applied), bytes, elements, element_size and ctype
-- (C++ type of dtype).
function M.options(argv, spec)
  local cpu, gpu = spec.defaults.cpu, spec.defaults.gpu
  local declared = {}
  for _, key in ipairs(ORDER) do
    if cpu[key] ~= nil then
      local entry = { key, cpu[key], (spec.help and spec.help[key]) or HELP[key], gpu = gpu[key] }
      if key == "size" then
        entry.type = "bytes"
      elseif key == "dtype" then
        entry.choices = spec.dtypes
      elseif key == "method" then
        entry.choices = spec.methods
      else
        entry.type, entry.min, entry.max = "integer", key == "warmup" and 0 or 1, key == "block" and 1024 or nil
      end
      declared[#declared + 1] = entry
    end
  end
  declared[#declared + 1] = { "validate", true, "check the results, every element", type = "boolean" }
  declared[#declared + 1] = { "plot", nil, "also draw the tables as heat maps into FILE (.svg; .png where "
    .. "rsvg-convert or ImageMagick is)", type = "plot" }
  local opts = iris.options(argv, { name = spec.name, about = spec.about, options = declared,
    usage = ("mpirun -np N iris-lua %s [options]"):format(arg and arg[0] or spec.name .. ".lua") })
  if not opts then return nil end
  if opts.dtype then
    opts.ctype, opts.element_size = M.CTYPES[opts.dtype], M.SIZES[opts.dtype]
  end
  if opts.size then
    opts.elements = math.floor(opts.size / (opts.element_size or 1))
    if opts.elements < 1 then
      M.usage_error("--size %s holds no %s element (%d bytes each) (--help lists the options)", opts.size, opts.dtype,
        opts.element_size)
    end
    opts.bytes = opts.elements * (opts.element_size or 1)
  end
  return opts
end

-- The scripts that move data between ranks need two of them.
function M.require_ranks(minimum)
  if iris.world_size() < minimum then
    M.usage_error("needs at least %d ranks, this job has %d: mpirun -np %d iris-lua %s", minimum, iris.world_size(),
      minimum, arg and arg[0] or "script.lua")
  end
end

-- A heap for `bytes` of tensors: each rounds up to 256 bytes, and the small ones (counters, flags)
-- fit in the margin; iris.init takes ctx.ccl's one-way staging from the heap besides (iris.ccl.heap_for).
function M.heap_size(bytes) return require("iris.ccl").heap_for(bytes + 4 * 1024 * 1024) end

---------------------------------------------------------------------------------------------------
-- Kernels

-- What every pattern's kernels start with: T (the --dtype's C++ type), grid-stride loops, block
-- shares for the block copies, the data pattern, and the fill and check kernels used by M.fill and
-- M.checker. Kernel parameters use `unsigned long long` for counters: CUDA's atomicAdd/atomicMin
-- take that type, and it passes a uint64 tensor.
local PRELUDE_LINE = debug.getinfo(1, "l").currentline + 2
local PRELUDE = [[
// Thread i of the grid and the width of the grid, for loops over n elements.
__device__ size_t first_index() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ size_t grid_stride() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

// Part `part` of `parts` of n elements, in chunks of whole 16-byte units so that the block copies
// run vectorized on every part.
__device__ void share(size_t n, size_t part, size_t parts, size_t* start, size_t* count) {
  const size_t unit = sizeof(T) < 16 ? 16 / sizeof(T) : 1;
  const size_t chunk = ((n + parts - 1) / parts + unit - 1) / unit * unit;
  *start = part * chunk;
  *count = *start >= n ? 0 : (n - *start < chunk ? n - *start : chunk);
}
// This block's part of n elements.
__device__ void block_share(size_t n, size_t* start, size_t* count) { share(n, blockIdx.x, gridDim.x, start, count); }

// Element i of rank `rank`'s data in round `round`: whole numbers 1 to 113, exact in every dtype, and
// different for each rank and round, so data from the wrong rank or round never passes the check.
__device__ T pattern(int rank, unsigned long long round, size_t i) {
  return static_cast<T>(static_cast<float>((i * 7 + static_cast<size_t>(rank) * 31 + round * 13) % 113 + 1));
}

__global__ void fill_pattern(T* x, size_t n, int rank, unsigned long long round) {
  for (size_t i = first_index(); i < n; i += grid_stride()) x[i] = pattern(rank, round, i);
}

// Counts the elements of x that differ from pattern(rank, round, i), or from `value` when rank < 0:
// stats[0] += how many, stats[1] = min(stats[1], the first one's index).
__global__ void count_differences(const T* x, size_t n, int rank, unsigned long long round, double value,
                                  unsigned long long* stats) {
  unsigned long long differ = 0, first = n;
  for (size_t i = first_index(); i < n; i += grid_stride()) {
    const float expected = rank < 0 ? static_cast<float>(value) : static_cast<float>(pattern(rank, round, i));
    if (static_cast<float>(x[i]) != expected && differ++ == 0) first = i;
  }
  if (differ != 0) {
    atomicAdd(&stats[0], differ);
    atomicMin(&stats[1], first);
  }
}
]]

-- The line of the calling script where `text` starts (the occurrence nearest `near`), or nil.
local function line_in_script(path, text, near)
  local file = io.open(path, "rb")
  if not file then return nil end
  local script = file:read("*a")
  file:close()
  local best, position = nil, 1
  while true do
    local at = script:find(text, position, true)
    if not at then return best end
    local _, newlines = script:sub(1, at - 1):gsub("\n", "")
    if not best or math.abs(newlines + 1 - near) < math.abs(best - near) then best = newlines + 1 end
    position = at + 1
  end
end

-- The source to compile: `using T = <ctype>;`, the prelude, then the script's kernels. #line
-- directives keep compiler messages on the right lines of this file and of the script.
function M.source(dtype, kernels)
  local caller = debug.getinfo(2, "Sl")
  local lines = { ("using T = %s;"):format(M.CTYPES[dtype]),
    ('#line %d "%s"'):format(PRELUDE_LINE, debug.getinfo(1, "S").short_src:match("[^/]*$")), PRELUDE }
  local line = caller.source:sub(1, 1) == "@" and line_in_script(caller.source:sub(2), kernels, caller.currentline)
  if line then lines[#lines + 1] = ('#line %d "%s"'):format(line, caller.short_src:match("[^/]*$")) end
  lines[#lines + 1] = kernels
  return table.concat(lines, "\n")
end

-- The pattern's value in Lua (for messages): the same formula as the prelude's pattern().
function M.pattern(rank, round, i) return (i * 7 + rank * 31 + round * 13) % 113 + 1 end

local function check_grid(n) return { grid = math.min(iris.cdiv(n, 256), 4096), block = 256 } end

-- Writes rank `rank`'s pattern of round `round` (default 0) into t (on this rank only).
function M.fill(mod, t, rank, round)
  mod.fill_pattern:launch(check_grid(t:numel()), t, t:numel(), rank, round or 0)
end

-- Returns check(t, expected, what): every element of t (on this rank) must be rank expected.rank's
-- pattern of round expected.round, or else equal expected.value. The device compares every element;
-- a difference fails through iris.assert_equal at the first one: its index, what it holds, what was
-- expected, how many differ, and the rank. Collective to create (it allocates), local to call.
function M.checker(ctx, mod)
  local stats = ctx:zeros(2, "uint64")
  return function(t, expected, what)
    local n = t:numel()
    stats:fill(0)
    stats:set(2, n)
    mod.count_differences:launch(check_grid(n), t, n, expected.rank or -1, expected.round or 0, expected.value or 0,
      stats)
    local counted = stats:to_table()
    local differ, first = tonumber(counted[1]), tonumber(counted[2])
    if differ == 0 then return end
    local want = expected.rank and M.pattern(expected.rank, expected.round or 0, first) or expected.value
    local message = ("%s: element [%d] of %d (%d elements differ)"):format(what, first + 1, n, differ)
    iris.assert_equal(t:get(first + 1), want, message)
    error(message .. ": the device counted a difference that the host does not see", 2)
  end
end

---------------------------------------------------------------------------------------------------
-- Measuring

-- Runs fn on every rank `opts.warmup` times, then `opts.iters` times timed with device events (iris.bench),
-- every rank starting each run together (a barrier before each: the ranks of the all-to-all
-- patterns must overlap). Returns this rank's median in ms. Collective.
function M.time(ctx, opts, fn)
  for _ = 1, opts.warmup do
    ctx:barrier()
    fn()
  end
  local times = {}
  for i = 1, opts.iters do
    ctx:barrier()
    times[i] = iris.bench(fn, { warmup = 0, iters = 1 }).median_ms
  end
  ctx:barrier()
  table.sort(times)
  local middle = math.floor((#times + 1) / 2)
  return #times % 2 == 1 and times[middle] or (times[middle] + times[middle + 1]) / 2
end

function M.gbs(bytes, ms) return bytes / (ms * 1e-3) / 1e9 end

-- Every ordered pair of ranks (row, column), row by row: `for row, column in patterns.pairs(world)`;
-- without a rank and itself when `others_only`.
function M.pairs(world, others_only)
  local row, column = 0, -1
  return function()
    repeat
      column = column + 1
      if column == world then row, column = row + 1, 0 end
    until row >= world or not (others_only and row == column)
    if row < world then return row, column end
  end
end

-- The copy engine: src in rank src_rank's heap to dst in rank dst_rank's heap (one of them this rank),
-- through the C API's device copy (cudaMemcpy/hipMemcpy between mapped heaps; memcpy on cpu).
function M.copy_device(dst, dst_rank, src, src_rank)
  local to = ffi.cast("char*", C.iris_heap_base(dst_rank)) + dst:offset()
  local from = ffi.cast("char*", C.iris_heap_base(src_rank)) + src:offset()
  errors.check(C.iris_copy_device(to, from, math.min(dst:nbytes(), src:nbytes())))
end

-- The reference of the data patterns: the GB/s of the copy engine moving `dst:nbytes()` from src in
-- src_rank's heap to dst in dst_rank's, timed like the kernels, by rank `by` (nil on the others).
-- Collective.
function M.copy_engine_gbs(ctx, opts, by, dst, dst_rank, src, src_rank)
  local ms = M.time(ctx, opts, function()
    if ctx.rank == by then M.copy_device(dst, dst_rank, src, src_rank) end
  end)
  if ctx.rank == by then return M.gbs(dst:nbytes(), ms) end
end

---------------------------------------------------------------------------------------------------
-- Gathering and printing

-- Every rank passes its own row (a table keyed by column rank); returns all rows, keyed by rank.
function M.gather_rows(ctx, row)
  local rows = {}
  for r = 0, ctx.world_size - 1 do rows[r] = ctx:broadcast(ctx.rank == r and row or nil, r) or {} end
  return rows
end

-- "1 GiB", "256 KiB": the byte count as iris words sizes.
function M.human_bytes(bytes) return ffi.string(C.iris_human_bytes(bytes)) end

-- The tables printed so far and what they measured: --plot draws them (rank 0).
local plotted = { panels = {} }

-- Prints what is measured and how (rank 0).
function M.print_header(ctx, opts, what, how)
  if ctx.rank ~= 0 then return end
  plotted.title = ("%s: %s"):format(opts.name, what)
  print(("%s: %s"):format(opts.name, what))
  print(("  %d ranks, %s backend (%s); %s; median of %d runs after %d warm-up"):format(ctx.world_size, ctx.backend,
    ctx.device_name or "?", how, opts.iters, opts.warmup))
end

-- Prints a rank-by-rank table: `title`, then one row per rank with cell(row, column) (text, or nil
-- for "-") in each column. The number a cell starts with is what --plot colours it by.
function M.print_matrix(title, world, cell)
  plotted.panels[#plotted.panels + 1] = {
    title = title, rows = world, columns = world,
    value = function(r, c) return tonumber((cell(r, c) or ""):match("^%-?[%d.]+")) end,
    text = function(r, c) return cell(r, c) or "-" end,
  }
  print(title)
  local line = { ("  %-8s"):format("") }
  for c = 0, world - 1 do line[#line + 1] = ("%11s"):format("rank " .. c) end
  print(table.concat(line))
  for r = 0, world - 1 do
    line = { ("  rank %-3d"):format(r) }
    for c = 0, world - 1 do line[#line + 1] = ("%11s"):format(cell(r, c) or "-") end
    print(table.concat(line))
  end
end

-- The bandwidth report of the data patterns (rank 0): rows[r][c] = {gbs=, copy_gbs=} from the rank
-- of row r. Prints the kernel's GB/s, the copy engine's (the reference) and their ratio.
function M.print_bandwidth(ctx, rows, titles)
  if ctx.rank ~= 0 then return end
  local function field(name, fmt)
    return function(r, c)
      local cell = rows[r][c]
      return cell and cell[name] and fmt:format(cell[name])
    end
  end
  M.print_matrix(titles.kernel, ctx.world_size, field("gbs", "%.1f"))
  M.print_matrix(titles.copy, ctx.world_size, field("copy_gbs", "%.1f"))
  M.print_matrix(titles.ratio, ctx.world_size, function(r, c)
    local cell = rows[r][c]
    return cell and cell.gbs and cell.copy_gbs and ("%.2fx"):format(cell.gbs / cell.copy_gbs)
  end)
end

-- "total read per rank, GB/s: rank 0 742.1, rank 1 741.0" from rows[r].total_gbs (rank 0).
function M.print_totals(ctx, rows, verb)
  if ctx.rank ~= 0 then return end
  local totals = {}
  for r = 0, ctx.world_size - 1 do totals[#totals + 1] = ("rank %d %.1f"):format(r, rows[r].total_gbs) end
  print(("total %s per rank, GB/s: %s"):format(verb, table.concat(totals, ", ")))
end

-- The atomics' report (rank 0): rows[r][c] = {gbs=, us=}, under the titles {throughput=, latency=}.
function M.print_atomics(ctx, rows, titles)
  if ctx.rank ~= 0 then return end
  M.print_matrix(titles.throughput, ctx.world_size, function(r, c) return ("%.2f"):format(rows[r][c].gbs) end)
  M.print_matrix(titles.latency, ctx.world_size, function(r, c) return ("%.2f"):format(rows[r][c].us) end)
end

-- The files the command line asked for (rank 0): --plot, the tables printed so far as heat maps; --csv
-- and --json, the measurements `rows` (rows[r][c] = the cell of row rank r, column rank c, as the
-- tables print them; rows[r].total_gbs where there is one) as one record per pair of ranks.
function M.write_files(ctx, opts, rows)
  if ctx.rank ~= 0 then return end
  if opts.plot then
    iris.plot.save(opts.plot, iris.plot.heatmap { title = plotted.title or opts.name, panels = plotted.panels })
    print(("plot: %d table%s drawn into %s"):format(#plotted.panels, #plotted.panels == 1 and "" or "s", opts.plot))
  end
  local records, columns, seen = {}, { "row", "column" }, { row = true, column = true }
  for r = 0, ctx.world_size - 1 do
    for c = 0, ctx.world_size - 1 do
      local cell = rows[r] and rows[r][c]
      if cell then
        local record = { row = r, column = c, total_gbs = rows[r].total_gbs }
        for name, value in pairs(cell) do record[name] = value end
        if record.gbs and record.copy_gbs then record.ratio = record.gbs / record.copy_gbs end
        for _, name in ipairs { "gbs", "copy_gbs", "ratio", "us", "total_gbs" } do
          if record[name] ~= nil and not seen[name] then
            seen[name] = true
            columns[#columns + 1] = name
          end
        end
        records[#records + 1] = record
      end
    end
  end
  iris.options.write(opts, records, { columns = columns, setting = { ranks = ctx.world_size, backend = ctx.backend,
    device = ctx.device_name, bytes = opts.bytes, iters = opts.iters, warmup = opts.warmup } })
end

-- The last line: what was checked, or that nothing was.
function M.print_validated(ctx, opts, what)
  if ctx.rank ~= 0 then return end
  print(opts.validate and ("validated: %s"):format(what) or "not validated (--no-validate)")
end

return M
