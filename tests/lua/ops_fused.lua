-- ctx.ops against products and collectives computed in Lua: every op and variant, each dtype, dim 1 and
-- 2, views, calls in a row on the same buffers with no barrier between them, and the argument checks.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local g = require "gemm_reference"
local ref = require "ccl_reference"

local ctx = iris.init { heap_size = "32MiB" }
local W, me = ctx.world_size, ctx.rank
-- variant copy_engine moves data by the copy engine, which reaches this node's heaps only (nil: left out)
local COPY_ENGINE = ctx.nodes == 1 and "copy_engine" or nil
-- variant vendor needs its collective library on every rank (nil: left out, and the test below skips)
local VENDOR_WHY = ref.vendor_why(ctx)
local VENDOR = not VENDOR_WHY and "vendor" or nil
local present = ref.present

-- Sizes with partial 128 x 128 tiles and a partial step of k.
local M, N, K = 70, 150, 40

-- Where it cannot open (ranks sharing a GPU: NCCL takes one rank per GPU), the other cases leave
-- variant vendor out, and here it is an error saying why, which auto passes over.
iris.test("variant vendor without its library: an error saying why, and auto passes over it", function()
  if not VENDOR_WHY then return iris.skip("the vendor's library opens on every rank here") end
  local a, b, c = ctx:ones({ M, K }, "float16"), ctx:ones({ K, N }, "float16"), ctx:zeros({ M, N }, "float16")
  local ok, err = pcall(ctx.ops.matmul_all_reduce, c, a, b, { variant = "vendor" })
  assert(not ok and tostring(err):find('variant "vendor" cannot run this call: ' .. VENDOR_WHY, 1, true), tostring(err))
  ctx.ops.matmul_all_reduce(c, a, b)
  iris.assert_equal(c, K * W)
end)

-- The sum over the ranks of rank r's A (m x k, salt) times B.
local function summed(m, n, k, salt, b)
  local sum = {}
  for r = 0, W - 1 do g.add(sum, g.matmul(g.values(r, m, k, salt), b, m, n, k)) end
  return sum
end

iris.test("matmul: each dtype, and A as a window of a larger matrix", function()
  for _, dtype in ipairs(g.dtypes) do
    local a, b, c = ref.window(ctx, M, K, dtype), ctx:zeros({ K, N }, dtype), ctx:zeros({ M, N }, dtype)
    local av, bv = g.values(me, M, K, 1), g.values(0, K, N, 2)
    g.fill(a, av)
    g.fill(b, bv)
    assert(ctx.ops.matmul(c, a, b) == c)
    g.check(ctx, c, g.matmul(av, bv, M, N, K), "matmul " .. dtype)
  end
end)

-- Rows on 16-byte boundaries with partial tiles of the whole-kernel GEMM on Hopper (128 x 256, steps of
-- 64 k): on an H100 or H200 ctx.ops.matmul and the bulk variants take it for 16-bit inputs; elsewhere
-- the tile, against the same products.
iris.test("matmul and bulk on shapes the whole-kernel GEMM takes", function()
  local m, n, k = 136, 264, 72
  for _, dtype in ipairs { "bfloat16", "float16" } do
    local a, b, c = ctx:zeros({ m, k }, dtype), ctx:zeros({ k, n }, dtype), ctx:zeros({ m, n }, dtype)
    local bv = g.values(0, k, n, 2)
    g.fill(a, g.values(me, m, k, 1))
    g.fill(b, bv)
    ctx.ops.matmul(c, a, b)
    g.check(ctx, c, g.matmul(g.values(me, m, k, 1), bv, m, n, k), "matmul " .. dtype)
    ctx.ops.matmul_all_reduce(c, a, b, { variant = "bulk" })
    g.check(ctx, c, summed(m, n, k, 1, bv), "matmul_all_reduce bulk " .. dtype)
  end
end)

iris.test("matmul_all_reduce: every variant, twice in a row", function()
  local b = ctx:zeros({ K, N }, "float16")
  local bv = g.values(0, K, N, 2)
  g.fill(b, bv)
  for _, variant in ipairs(present("two_shot", "one_shot", "ring", "atomic", "spinlock", "specialized", "bulk",
    "overlap", VENDOR, COPY_ENGINE)) do
    local a, c = ctx:zeros({ M, K }, "float16"), ctx:zeros({ M, N }, "float16")
    for round = 1, 2 do
      g.fill(a, g.values(me, M, K, round))
      ctx.ops.matmul_all_reduce(c, a, b, { variant = variant, blocks = 2 })
      g.check(ctx, c, summed(M, N, K, round, bv), ("matmul_all_reduce %s round %d"):format(variant, round))
    end
  end
end)

iris.test("matmul_all_reduce: bfloat16 and float32", function()
  for _, dtype in ipairs { "bfloat16", "float32" } do
    local a, b, c = ctx:zeros({ M, K }, dtype), ctx:zeros({ K, N }, dtype), ctx:zeros({ M, N }, dtype)
    local bv = g.values(0, K, N, 2)
    g.fill(a, g.values(me, M, K, 1))
    g.fill(b, bv)
    ctx.ops.matmul_all_reduce(c, a, b)
    g.check(ctx, c, summed(M, N, K, 1, bv), "matmul_all_reduce " .. dtype)
  end
end)

iris.test("matmul_all_gather: push, specialized, bulk, overlap, vendor and copy_engine, dim 1 and 2", function()
  local bv = g.values(0, K, N, 2)
  local b = ctx:zeros({ K, N }, "bfloat16")
  g.fill(b, bv)
  for _, variant in ipairs(present("push", "specialized", "bulk", "overlap", VENDOR, COPY_ENGINE)) do
    for dim = 1, (variant == "vendor" or variant == "copy_engine") and 1 or 2 do
      local a = ctx:zeros({ M, K }, "bfloat16")
      local out = ctx:zeros(dim == 1 and { W * M, N } or { M, W * N }, "bfloat16")
      g.fill(a, g.values(me, M, K, 1))
      ctx.ops.matmul_all_gather(out, a, b, { variant = variant, dim = dim })
      local expected = {}
      for r = 0, W - 1 do
        local c = g.matmul(g.values(r, M, K, 1), bv, M, N, K)
        for i = 0, M - 1 do
          for j = 0, N - 1 do
            local at = dim == 1 and (r * M + i) * N + j or i * W * N + r * N + j
            expected[at + 1] = c[i * N + j + 1]
          end
        end
      end
      g.check(ctx, out, expected, ("matmul_all_gather %s dim %d"):format(variant, dim))
    end
  end
end)

-- all_gather_matmul of m x k shards (dtype) against the product of the gathered A in Lua.
local function check_all_gather_matmul(m, n, k, dtype, variants)
  local bv = g.values(0, W * k, n, 2)
  local b = ctx:zeros({ W * k, n }, dtype)
  g.fill(b, bv)
  -- Row i of the gathered A is [row i of rank 0's shard, row i of rank 1's, ...].
  local gathered = {}
  for r = 0, W - 1 do
    local shard = g.values(r, m, k, 1)
    for i = 0, m - 1 do
      for kk = 0, k - 1 do gathered[i * W * k + r * k + kk + 1] = shard[i * k + kk + 1] end
    end
  end
  local expected = g.matmul(gathered, bv, m, n, W * k)
  for _, variant in ipairs(variants) do
    local a, out = ctx:zeros({ m, k }, dtype), ctx:zeros({ m, n }, dtype)
    g.fill(a, g.values(me, m, k, 1))
    ctx.ops.all_gather_matmul(out, a, b, { variant = variant })
    g.check(ctx, out, expected, ("all_gather_matmul %s %s %dx%dx%d"):format(variant, dtype, m, n, k))
  end
end

iris.test("all_gather_matmul: pull, staged, bulk, overlap, vendor and copy_engine", function()
  check_all_gather_matmul(M, N, K, "float32", present("pull", "staged", "bulk", "overlap", VENDOR, COPY_ENGINE))
  check_all_gather_matmul(M, N, K, "bfloat16", present("bulk", "overlap", VENDOR, COPY_ENGINE))
end)

-- copy_engine, several calls back to back without a wait between them: each call's arrival keeps a
-- rank's copies out of a peer's out (and A) until the peer's earlier call is done with it.
iris.test("copy_engine: calls back to back on the same tensors", function()
  if ctx.nodes > 1 then return iris.skip("variant copy_engine takes ranks on one node") end
  local bv = g.values(0, K, N, 2)
  local b = ctx:zeros({ K, N }, "float32")
  g.fill(b, bv)
  local out = ctx:zeros({ W * M, N }, "float32")
  for call = 1, 4 do
    local a = ctx:zeros({ M, K }, "float32")
    g.fill(a, g.values(me + call, M, K, 1))
    ctx.ops.matmul_all_gather(out, a, b, { variant = "copy_engine" })
    local expected = {}
    for r = 0, W - 1 do
      local c = g.matmul(g.values(r + call, M, K, 1), bv, M, N, K)
      for i = 1, M * N do expected[r * M * N + i] = c[i] end
    end
    g.check(ctx, out, expected, ("matmul_all_gather copy_engine, call %d"):format(call))
  end
end)

-- Shards whose rows are 2 KiB or more: staged copies them with the bulk-copy unit on sm_90+ (ops::send_rows),
-- 130 rows (a partial second piece of 128).
iris.test("all_gather_matmul: staged with rows for the bulk-copy unit", function()
  check_all_gather_matmul(130, 24, 520, "float32", { "staged" })
  check_all_gather_matmul(130, 24, 1048, "bfloat16", { "staged" })
end)

iris.test("matmul_reduce_scatter: auto, specialized, bulk, overlap, vendor and copy_engine, dim 1 and 2", function()
  local m, n = 34 * W, 38 * W
  local bv = g.values(0, K, n, 2)
  local b = ctx:zeros({ K, n }, "float16")
  g.fill(b, bv)
  local sum = summed(m, n, K, 1, bv)
  for _, variant in ipairs(present("auto", "specialized", "bulk", "overlap", VENDOR, COPY_ENGINE, COPY_ENGINE)) do
    for dim = 1, (variant == "vendor" or variant == COPY_ENGINE) and 1 or 2 do
    local a = ctx:zeros({ m, K }, "float16")
    local cm, cn = dim == 1 and m / W or m, dim == 1 and n or n / W
    local out = ctx:zeros({ cm, cn }, "float16")
    g.fill(a, g.values(me, m, K, 1))
    ctx.ops.matmul_reduce_scatter(out, a, b, { dim = dim, variant = variant })
    local expected = {}
    for i = 0, cm - 1 do
      for j = 0, cn - 1 do
        local r, c = dim == 1 and me * cm + i or i, dim == 1 and j or me * cn + j
        expected[i * cn + j + 1] = sum[r * n + c + 1]
      end
    end
    g.check(ctx, out, expected, ("matmul_reduce_scatter %s dim %d"):format(variant, dim))
  end end -- (copy_engine twice: the second call reuses the inbox the first filled)
end)

iris.test("ops and collectives in a row on the same buffers, no barrier between them", function()
  local a, b = ctx:zeros({ M, K }), ctx:zeros({ K, N })
  local c, gathered = ctx:zeros({ M, N }), ctx:zeros({ W * M, N })
  local bv = g.values(0, K, N, 2)
  g.fill(b, bv)
  for round = 1, 3 do
    g.fill(a, g.values(me, M, K, round))
    ctx.ops.matmul_all_reduce(c, a, b)       -- c = sum of the products
    ctx.ccl.all_reduce(c, c)                  -- c = W times that
    ctx.ops.matmul_all_gather(gathered, a, b) -- every rank's product, stacked
    local expected = summed(M, N, K, round, bv)
    for i = 1, #expected do expected[i] = expected[i] * W end
    g.check(ctx, c, expected, "all_reduce of matmul_all_reduce, round " .. round)
    local mine = g.matmul(g.values(W - 1, M, K, round), bv, M, N, K)
    g.check(ctx, gathered:narrow(1, (W - 1) * M + 1, M), mine, "the last rank's block, round " .. round)
  end
end)

-- Variant overlap: chunks of the product multiplied on one stream while ctx.ccl moves the finished ones on
-- the other (the cpu backend runs them in order: the same calls). Operands as windows of larger matrices,
-- a grid for the collectives, and calls in a row on the same buffers with other ops between them.
iris.test("overlap: windows, comm_blocks, and calls in a row with other ops", function()
  local bv = g.values(0, K, N, 2)
  local b = ctx:zeros({ K, N }, "bfloat16")
  g.fill(b, bv)
  local a = ref.window(ctx, M, K, "bfloat16")
  local c, gathered = ctx:zeros({ M, N }, "bfloat16"), ctx:zeros({ M, W * N }, "bfloat16")
  for round = 1, 2 do
    g.fill(a, g.values(me, M, K, round))
    ctx.ops.matmul_all_reduce(c, a, b, { variant = "overlap", comm_blocks = 2 })
    ctx.ops.matmul_all_gather(gathered, a, b, { variant = "overlap", dim = 2 })
    ctx.ops.matmul_all_reduce(c, a, b, { variant = "overlap" })
    g.check(ctx, c, summed(M, N, K, round, bv), "matmul_all_reduce overlap, round " .. round)
    local mine = g.matmul(g.values(W - 1, M, K, round), bv, M, N, K)
    g.check(ctx, gathered:narrow(2, (W - 1) * N + 1, N), mine, "the last rank's columns, round " .. round)
  end
end)

-- auto on the whole-kernel GEMM (an H100 or H200, 16-bit elements): its rules by world size against the
-- figures they come from (docs/perf.md "auto with the vendor's path", 2 and 4 ranks), with the vendor's
-- libraries and without them; pure Lua, so checked here on any backend.
iris.test("auto's rules take the world size and fall back to the vendor's path", function()
  local rule = require("iris.ops").auto_rule
  local no_vendor = function(v) return v == "vendor" and "no vendor libraries" or nil end
  local function expect(ranks, op, m, n, k, variant, without_vendor)
    for _, case in ipairs { { variant, nil }, { without_vendor or variant, no_vendor } } do
      local got = rule(ranks, op, m, n, k, case[2])
      if got ~= case[1] then
        error(("%s %dx%dx%d at %d ranks%s: auto takes %s, expected %s"):format(op, m, n, k, ranks,
          case[2] and " without the vendor" or "", got, case[1]), 2)
      end
    end
  end
  for _, ranks in ipairs { 1, 2, 3, 4, 8 } do
    local four = ranks >= 4
    -- copy_engine's rules are the 2-rank row's (2 and 3 ranks); never on one rank
    local ce = ranks == 2 or ranks == 3
    -- all_gather_matmul: ours below 512 columns of A per rank, copy_engine from 4096 on 2 ranks, else the vendor's
    expect(ranks, "all_gather_matmul", 8192, 4608, 36864, ce and "copy_engine" or "vendor",
      ce and "copy_engine" or four and "fused" or "bulk")
    expect(ranks, "all_gather_matmul", 8192, 8192, 2048, ranks <= 4 and "vendor" or "bulk", "bulk")
    expect(ranks, "all_gather_matmul", 16384, 8192, 512, ranks == 1 and "vendor" or "bulk", "bulk")
    expect(ranks, "all_gather_matmul", 4096, 4096, 256, "bulk")
    -- matmul_all_gather: copy_engine from 5e10 FLOP under 4096 columns of A per rank on 2 ranks; the fused
    -- kernel on the smallest from 4 ranks
    expect(ranks, "matmul_all_gather", 4096, 4096, 256, four and "fused" or "vendor", ce and "copy_engine" or "fused")
    expect(ranks, "matmul_all_gather", 8192, 8192, 2048, ce and "copy_engine" or "vendor", ce and "copy_engine" or "fused")
    expect(ranks, "matmul_all_gather", 16384, 8192, 512, ce and "copy_engine" or "vendor", ce and "copy_engine" or "fused")
    expect(ranks, "matmul_all_gather", 8192, 4608, 36864, "vendor", "bulk")
    -- matmul_reduce_scatter: bulk under 1e11 FLOP; matmul_all_reduce: the vendor's everywhere
    expect(ranks, "matmul_reduce_scatter", 4096, 4096, 256, "bulk")
    for _, s in ipairs { { 8192, 4608, 36864 }, { 16384, 8192, 512 } } do
      expect(ranks, "matmul_reduce_scatter", s[1], s[2], s[3], "vendor", "bulk")
    end
    for _, s in ipairs { { 8192, 4608, 36864 }, { 4096, 4096, 256 }, { 128, 128, 128 } } do
      expect(ranks, "matmul_all_reduce", s[1], s[2], s[3], "vendor", "bulk")
    end
  end
end)

-- A call that fails the checks, and the text its error must contain.
local function refused(fn, text)
  local ok, message = pcall(fn)
  if ok then error("the call succeeded; expected an error saying " .. text, 2) end
  if not tostring(message):find(text, 1, true) then
    error(("the error says %q, expected it to contain %q"):format(tostring(message), text), 2)
  end
end

iris.test("arguments are checked at the caller's line", function()
  local a, b, c = ctx:zeros({ 8, 4 }, "float16"), ctx:zeros({ 4, 6 }, "float16"), ctx:zeros({ 8, 6 }, "float16")
  refused(function() ctx.ops.matmul_all_reduce(c, a, ctx:zeros({ 5, 6 }, "float16")) end, "B needs 4 rows")
  refused(function() ctx.ops.matmul_all_reduce(ctx:zeros({ 8, 7 }, "float16"), a, b) end,
    "out has shape {8, 7}; A x B makes it {8, 6}")
  refused(function() ctx.ops.matmul(c, a, ctx:zeros({ 4, 6 })) end, "out is float16, A float16, B float32")
  refused(function() ctx.ops.matmul_all_reduce(c:view({ 48 }), a, b) end, "out must be a matrix (a 2-d tensor)")
  refused(function()
    local i = ctx:zeros({ 8, 4 }, "int32")
    ctx.ops.matmul(ctx:zeros({ 8, 6 }, "int32"), i, ctx:zeros({ 4, 6 }, "int32"))
  end, "out is int32; ctx.ops multiplies float16, bfloat16 and float32")
  refused(function() ctx.ops.matmul_all_reduce(c, a, b, { variant = "push" }) end,
    "variant must be \"auto\", \"two_shot\", \"one_shot\", \"ring\", \"atomic\", \"spinlock\", \"specialized\", \"bulk\", \"overlap\", \"vendor\" or \"copy_engine\", got 'push'")
  refused(function() ctx.ops.matmul_all_gather(ctx:zeros({ 8 * W, 6 }, "float16"), a, b, { variant = "pull" }) end,
    "\"overlap\", \"vendor\" or \"copy_engine\", got 'pull'")
  -- vendor: the library's collectives take whole contiguous buffers, chunks along dim 1
  refused(function() ctx.ops.matmul_all_reduce(ref.window(ctx, 8, 6, "float16"), a, b, { variant = "vendor" }) end,
    "ctx.ops.matmul_all_reduce: variant \"vendor\" cannot run this call: out is not contiguous")
  refused(function()
    ctx.ops.matmul_all_gather(ctx:zeros({ 8, 6 * W }, "float16"), a, b, { variant = "vendor", dim = 2 })
  end, "variant \"vendor\" cannot run this call: its collectives take chunks along dim 1 only")
  refused(function()
    ctx.ops.matmul_all_reduce(ctx:zeros({ 0, 6 }, "float16"), ctx:zeros({ 0, 4 }, "float16"), b, { variant = "overlap" })
  end, "variant \"overlap\" cuts the product's rows into chunks and needs at least one")
  -- copy_engine: along dim 1, contiguous
  if COPY_ENGINE then
    refused(function()
      ctx.ops.matmul_all_reduce(ref.window(ctx, 8, 6, "float16"), ctx:zeros({ 8, 4 }, "float16"), b, { variant = "copy_engine" })
    end, "ctx.ops.matmul_all_reduce: variant \"copy_engine\" cannot run this call: out is not contiguous")
    refused(function()
      ctx.ops.matmul_reduce_scatter(ctx:zeros({ 8, 6 }, "float16"), ctx:zeros({ 8, 4 }, "float16"),
        ctx:zeros({ 4, 6 * W }, "float16"), { variant = "copy_engine", dim = 2 })
    end, "ctx.ops.matmul_reduce_scatter: variant \"copy_engine\" cannot run this call: its copies move whole rows")
  end
  refused(function()
    ctx.ops.matmul_all_gather(ctx:zeros({ 8, 6 * W }, "float16"), a, b, { variant = "copy_engine", dim = 2 })
  end, "variant \"copy_engine\" cannot run this call: its copies move whole rows: chunks along dim 1 only")
  refused(function()
    ctx.ops.matmul_all_gather(ref.window(ctx, 8 * W, 6, "float16"), a, b, { variant = "copy_engine" })
  end, "variant \"copy_engine\" cannot run this call: out is not contiguous")
  if ctx.nodes > 1 then
    refused(function() ctx.ops.matmul_all_gather(ctx:zeros({ 8 * W, 6 }, "float16"), a, b, { variant = "copy_engine" }) end,
      "variant \"copy_engine\" cannot run this call: the copy engine reaches this node's heaps only")
  end
  refused(function() ctx.ops.matmul_all_reduce(c, a, b, { dim = 2 }) end,
    "unknown option 'dim' (options: variant, blocks, comm_blocks)")
  local square = ctx:zeros({ 6, 6 }, "float16")
  refused(function() ctx.ops.matmul(square, square, square) end, "out and A overlap")
  if W > 1 then
    refused(function() ctx.ops.matmul_all_gather(c, a, b) end, ("makes it {%d, 6}"):format(8 * W))
    refused(function() ctx.ops.all_gather_matmul(c, a, b) end,
      ("so B needs %d rows (the gathered k)"):format(4 * W))
    refused(function() ctx.ops.matmul_reduce_scatter(c, ctx:zeros({ 7, 4 }, "float16"), b) end,
      ("the product has 7 rows, not a multiple of the %d ranks"):format(W))
  end
end)
