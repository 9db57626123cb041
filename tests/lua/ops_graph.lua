-- ctx.ops inside ctx:capture (docs/graphs.md): the fused ops replay to what the same calls made again
-- give, beside ctx.ccl calls and user kernels; a first call that would allocate a workspace refuses
-- inside the capture, naming the op.
local ctx = iris.init { heap_size = "32MiB" }
local W, me = ctx.world_size, ctx.rank
local M, N, K = 70, 150, 40

local mod = iris.compile [[
// A's next value from C: small whole numbers, so every product and sum is exact in float32.
__global__ void next_a(float* a, const float* c, long n, long c_n, int rank) {
  long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = static_cast<float>((static_cast<long>(c[i % c_n]) + rank + i) % 5);
}
]]

local function operands()
  local a, b = ctx:zeros({ M, K }), ctx:zeros({ K, N })
  a:copy(ctx:arange(M * K):reshape({ M, K }))
  b:fill(1)
  mod.next_a:launch({ grid = iris.cdiv(M * K, 256), block = 256 }, a, a, M * K, M * K, me)
  local b_gathered = ctx:zeros({ W * K, N })
  b_gathered:fill(1)
  return { a = a, b = b, c = ctx:zeros({ M, N }), gathered = ctx:zeros({ M * W, N }), sum = ctx:zeros({ M, N }),
    b_gathered = b_gathered, product = ctx:zeros({ M, N }) }
end

-- opts: the ops' options (nil: auto). Variant overlap forks onto the backend's second stream and joins it
-- back: the capture holds both streams' work.
local function step(s, opts)
  ctx.ops.matmul_all_reduce(s.c, s.a, s.b, opts)
  ctx.ops.matmul_all_gather(s.gathered, s.a, s.b, opts)
  if opts then ctx.ops.all_gather_matmul(s.product, s.a, s.b_gathered, opts) end
  ctx.ccl.all_reduce(s.sum, s.c)
  mod.next_a:launch({ grid = iris.cdiv(M * K, 256), block = 256 }, s.a, s.sum, M * K, M * N, me)
end

-- Variant vendor's library enqueues on the stream on GPUs (NCCL, RCCL: replayed like the others); MPI, the
-- cpu backend's, waits on the host, so there the capture refuses it.
-- (Where the library cannot open, ranks sharing a GPU under MPS, the vendor's case skips.)
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local vendor_why = require("ccl_reference").vendor_why(ctx)
for _, opts in ipairs { false, { variant = "overlap" }, { variant = "vendor" } } do
  iris.test(("fused ops replay to what the same calls made again give (%s)"):format(opts and opts.variant or "auto"),
    function()
    opts = opts or nil
    if opts and opts.variant == "vendor" and vendor_why then return iris.skip(vendor_why) end
    local replayed, eager = operands(), operands()
    step(replayed, opts) -- the first calls allocate the ops' workspaces: outside the capture
    step(eager, opts)
    if opts and opts.variant == "vendor" and ctx.backend == "cpu" and W > 1 then
      local ok, err = pcall(ctx.capture, ctx, function() step(replayed, opts) end)
      assert(not ok and tostring(err):find("cannot run inside ctx:capture(fn): MPI's collectives wait on the host", 1,
        true), err)
      return
    end
    local g = ctx:capture(function() step(replayed, opts) end)
    for k = 1, 2 do
      g:replay()
      step(eager, opts)
      for name, t in pairs(replayed) do iris.assert_equal(t, eager[name], ("replay %d: %s"):format(k, name)) end
    end
    g:replay(2)
    step(eager, opts)
    step(eager, opts)
    for name, t in pairs(replayed) do iris.assert_equal(t, eager[name], "g:replay(2): " .. name) end
    g:free()
  end)
end

iris.test("variant copy_engine refuses inside the capture on more than one rank", function()
  local a, b = ctx:zeros({ 8, 8 }), ctx:zeros({ 8, 8 })
  local out = ctx:zeros({ 8 * W, 8 })
  ctx.ops.matmul_all_gather(out, a, b, { variant = "copy_engine" }) -- (its workspace-free first call, outside)
  local fn = function() ctx.ops.matmul_all_gather(out, a, b, { variant = "copy_engine" }) end
  local ok, err = pcall(ctx.capture, ctx, fn)
  if W == 1 then
    assert(ok, err) -- one rank: the GEMMs alone, captured like any launch
    err:free()
    return
  end
  assert(not ok and tostring(err):find(("ops_graph.lua:%d: ctx.ops.matmul_all_gather cannot run inside "
    .. "ctx:capture(fn): variant copy_engine's copies"):format(debug.getinfo(fn, "S").linedefined), 1, true), err)
end)

iris.test("a first call that allocates a workspace refuses inside the capture", function()
  local a, b, c = ctx:zeros({ 8 * W, 8 }), ctx:zeros({ 8, 8 }), ctx:zeros({ 8, 8 }) -- a shape never used before
  local fn = function() ctx.ops.matmul_reduce_scatter(c, a, b) end
  local ok, err = pcall(ctx.capture, ctx, fn)
  assert(not ok and tostring(err):find(("ops_graph.lua:%d: ctx.ops.matmul_reduce_scatter cannot run inside "
    .. "ctx:capture(fn): its first call with these shapes allocates a workspace"):format(debug.getinfo(fn, "S")
    .linedefined), 1, true), err)
end)
