-- ctx.ccl and ctx.ops on a job over several nodes (docs/multinode.md): each call whose members span
-- nodes runs hierarchically, composed above the one-node collectives. The reduction inside each node
-- is ctx.ccl's own, on the node's ranks (group = the node); between nodes, the node's results travel
-- through the transport: peer views of ranks on other nodes (host copies through the host proxy) for
-- the collectives that move data, and for the reductions one kernel (kernels/nodes/combine.hip) that
-- reads every node's partial result through the device API and combines them in node order. Calls
-- whose members all share a node run as on one node. send and recv are ctx.ccl's own: their kernels
-- reach a peer on another node through the host proxy (device/iris/impl/ccl_p2p.hpp, "Between nodes").
--
-- "Equal to one node's results": every rank gets the same bits, and integer results (and min, max,
-- the bitwise operations) are exactly one node's; float sums and products associate differently
-- (each node's partial first, then the partials in node order), so they may differ from a one-node
-- run in the last bits, as results of two one-node variants do.
local ffi = require "ffi"
local errors = require "iris.errors"
local kernel = require "iris.kernel"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

-- Inside ctx:capture(fn) a call across nodes refuses: its path between nodes copies through the host.
local function refuse_in_capture(what)
  if graph.state.on then
    graph.refuse(what, "across nodes it copies between them through the host (docs/multinode.md); calls "
      .. "whose members share a node can be captured")
  end
  return true
end


-- The layout, read once: every node's ranks in rank order, and each node's first rank (its leader).
local function layout(ctx)
  local nodes, leaders = {}, {}
  for r = 0, ctx.world_size - 1 do
    local n = C.iris_node_of(r)
    nodes[n + 1] = nodes[n + 1] or {}
    table.insert(nodes[n + 1], r)
  end
  for n = 1, #nodes do leaders[n] = nodes[n][1] end
  return nodes, leaders
end

local function copy_options(opts, changes)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  for k, v in pairs(changes) do o[k] = v end
  return o
end

local function group_text(list) return "{" .. table.concat(list, ", ") .. "}" end

-- Wraps ctx.ccl's table `ccl` (made by iris.ccl for this context): same functions, same arguments.
function M.wrap_ccl(ctx, ccl)
  local codes = require "iris.codes" -- the dtype and reduction numbers the kernels take
  local nodes, leaders = layout(ctx)
  local mine = nodes[ctx.node + 1]
  local leaders_tensor -- int32 tensor of the leaders, made at the first reduction (a collective allocation)

  -- Whether a call with `opts` runs across nodes (every rank) or as on one node (its members share a
  -- node); any other group is an error saying so.
  local function across(what, opts)
    local group = type(opts) == "table" and opts.group or nil
    if group == nil then return refuse_in_capture(what) end
    if type(group) ~= "table" then return false end -- ctx.ccl words the error
    local first, spans, all = nil, false, #group == ctx.world_size
    local seen = {}
    for _, r in ipairs(group) do
      if type(r) ~= "number" or r < 0 or r >= ctx.world_size then return false end -- ctx.ccl words it
      local n = C.iris_node_of(r)
      first = first or n
      spans = spans or n ~= first
      seen[r] = true
    end
    for r = 0, ctx.world_size - 1 do all = all and seen[r] == true end
    if not spans then return false end
    if all then return refuse_in_capture(what) end
    local sorted = {}
    for _, r in ipairs(group) do sorted[#sorted + 1] = r end
    table.sort(sorted)
    errors.raise("invalid_argument", "%s: the group %s spans nodes without being every rank; across nodes ctx.ccl "
      .. "runs on every rank or on groups inside one node (not yet on other groups: docs/multinode.md)", what,
      group_text(sorted))
  end

  -- The node's part of a reduction: ctx.ccl on the node's ranks (a copy on a node of one rank).
  local function node_all_reduce(partial, inp, opts)
    if #mine > 1 then
      ccl.all_reduce(partial, inp, copy_options(opts, { group = mine, async = false }))
    else
      partial:copy(inp)
    end
  end

  local function all_reduce(out, inp, opts)
    local what = "ctx.ccl.all_reduce"
    -- ctx.ccl's own checks first (shapes, dtypes, options), on a call inside the node.
    local op = type(opts) == "table" and opts.op or "sum"
    local partial = ctx:empty_like(inp)
    local result = (out._contiguous and out ~= inp) and out or ctx:empty_like(out)
    node_all_reduce(partial, inp, opts)
    if not leaders_tensor then leaders_tensor = ctx:tensor(leaders, "int32") end
    ctx:barrier() -- every node's partial is complete before any rank reads it
    local n = partial:numel()
    if n > 0 then
      kernel.builtin("nodes/combine").nodes_combine:launch({ grid = math.max(1, math.min(64, math.ceil(n / 256))),
        block = 256 }, result, partial, n, codes.DTYPE[inp.dtype], codes.REDUCTION[op] or 0, leaders_tensor,
        #nodes, ctx)
    end
    ctx:barrier() -- no rank frees or rewrites its partial while another still reads it
    if result ~= out then out:copy(result) end
    partial:free()
    if result ~= out then result:free() end
    return out
  end

  -- Chunk `index` (0-based) of t along `dim`, `size` long.
  local function chunk(t, dim, index, size) return t:narrow(dim, index * size + 1, size) end

  local function dim_of(opts) return type(opts) == "table" and opts.dim or 1 end

  -- Every rank's piece, read where it lies (this node's peers through their heaps, other nodes' ranks
  -- through the transport), between two barriers: every source is complete before, none is changed
  -- while read.
  local function gather_pieces(fill)
    ctx:barrier()
    for r = 0, ctx.world_size - 1 do fill(r) end
    ctx:barrier()
  end

  -- Rank r's inp into chunk r of this rank's out (all_gather, gather). In place (inp is this rank's chunk
  -- of out), rank r's piece is chunk r of its own out.
  local function gather_piece(out, inp, dim, size, r)
    local in_place = inp._alloc == out._alloc
    if r ~= ctx.rank then
      chunk(out, dim, r, size):copy(in_place and chunk(out, dim, r, size):peer(r) or inp:peer(r))
    elseif not in_place then
      chunk(out, dim, r, size):copy(inp)
    end
  end

  local wrapped = {}
  for name, fn in pairs(ccl) do wrapped[name] = fn end

  function wrapped.all_reduce(out, inp, opts)
    if not across("ctx.ccl.all_reduce", opts) then return ccl.all_reduce(out, inp, opts) end
    return all_reduce(out, inp, opts)
  end

  function wrapped.reduce_scatter(out, inp, opts)
    if not across("ctx.ccl.reduce_scatter", opts) then return ccl.reduce_scatter(out, inp, opts) end
    local dim = dim_of(opts)
    local full = ctx:empty_like(inp)
    all_reduce(full, inp, copy_options(opts, { group = false }))
    out:copy(chunk(full, dim, ctx.rank, out:shape()[dim]))
    full:free()
    return out
  end

  function wrapped.all_gather(out, inp, opts)
    if not across("ctx.ccl.all_gather", opts) then return ccl.all_gather(out, inp, opts) end
    local dim = dim_of(opts)
    local size = inp:shape()[dim]
    gather_pieces(function(r) gather_piece(out, inp, dim, size, r) end)
    return out
  end

  function wrapped.all_to_all(out, inp, opts)
    if not across("ctx.ccl.all_to_all", opts) then return ccl.all_to_all(out, inp, opts) end
    local dim = dim_of(opts)
    local size = inp:shape()[dim] / ctx.world_size
    if size % 1 ~= 0 then
      errors.raise("invalid_argument", "ctx.ccl.all_to_all: inp's dimension %d (%d) does not divide by the %d ranks",
        dim, inp:shape()[dim], ctx.world_size)
    end
    local received = ctx:empty_like(out)
    gather_pieces(function(r)
      local from = r == ctx.rank and inp or inp:peer(r)
      chunk(received, dim, r, size):copy(chunk(from, dim, ctx.rank, size))
    end)
    out:copy(received)
    received:free()
    return out
  end

  function wrapped.broadcast(t, root, opts)
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    if not across("ctx.ccl.broadcast", opts) then return ccl.broadcast(t, root, opts) end
    root = root or 0
    ctx:barrier()
    if ctx.rank ~= root then t:copy(t:peer(root)) end
    ctx:barrier()
    return t
  end

  -- The rooted collectives: the root's result as the others make theirs, through every rank's copy
  -- (reduce: the hierarchical all_reduce into a scratch tensor every rank allocates alike).
  -- (root, opts) as the caller wrote them, with what ctx.ccl would check at the caller's line before the
  -- kernels that the path between nodes does not run: the root, and options only a reduction takes.
  local function rooted(what, root, opts, reduces)
    if type(root) == "table" and opts == nil then root, opts = nil, root end
    if root ~= nil and (type(root) ~= "number" or root % 1 ~= 0 or root < 0 or root >= ctx.world_size) then
      errors.raise("invalid_argument", "%s: root must be a rank of the group {0, ..., %d}, got %s", what,
        ctx.world_size - 1, tostring(root))
    end
    local o = type(opts) == "table" and opts or {}
    if not reduces and o.op ~= nil then errors.raise("invalid_argument", "%s: takes no op (it only copies)", what) end
    if not reduces and o.variant ~= nil and o.variant ~= "auto" and o.variant ~= "pull" and o.variant ~= "ll" then
      errors.raise("invalid_argument", "%s: variant must be \"auto\", \"pull\" or \"ll\", got %s", what,
        tostring(o.variant))
    end
    return root or 0, opts
  end

  function wrapped.reduce(out, inp, root, opts)
    if not across("ctx.ccl.reduce", type(root) == "table" and root or opts) then return ccl.reduce(out, inp, root, opts) end
    root, opts = rooted("ctx.ccl.reduce", root, opts, true)
    local so, si = out:shape(), inp:shape()
    if table.concat(so, ",") ~= table.concat(si, ",") or out.dtype ~= inp.dtype then
      errors.raise("invalid_argument", "ctx.ccl.reduce: out has shape {%s} (%s), inp {%s} (%s); they must be the same",
        table.concat(so, ", "), out.dtype, table.concat(si, ", "), inp.dtype)
    end
    local full = ctx:empty_like(inp)
    all_reduce(full, inp, copy_options(opts, { group = false }))
    if ctx.rank == root then out:copy(full) end
    full:free()
    return out
  end

  function wrapped.gather(out, inp, root, opts)
    if not across("ctx.ccl.gather", type(root) == "table" and root or opts) then return ccl.gather(out, inp, root, opts) end
    root, opts = rooted("ctx.ccl.gather", root, opts, false)
    local dim = dim_of(opts)
    local size = inp:shape()[dim]
    gather_pieces(function(r)
      if ctx.rank == root then gather_piece(out, inp, dim, size, r) end
    end)
    return out
  end

  function wrapped.scatter(out, inp, root, opts)
    if not across("ctx.ccl.scatter", type(root) == "table" and root or opts) then return ccl.scatter(out, inp, root, opts) end
    root, opts = rooted("ctx.ccl.scatter", root, opts, false)
    local dim = dim_of(opts)
    local size = out:shape()[dim]
    gather_pieces(function(r)
      if r ~= ctx.rank then return end
      local mine = chunk(r == root and inp or inp:peer(root), dim, r, size)
      if not (r == root and inp._alloc == out._alloc) then out:copy(mine) end
    end)
    return out
  end

  return wrapped
end

-- ctx.ops's fused operations across nodes, called by ctx.ops once it has checked the arguments: the
-- GEMM on this rank, then the hierarchical collective (the overlap of the fused kernels is a one-node
-- matter). `o`: the checked options.
function M.ops(ctx)
  local ops = {}
  local function product(a, b, dtype)
    local p = ctx:empty({ a:shape()[1], b:shape()[2] }, dtype)
    ctx.ops.matmul(p, a, b)
    return p
  end

  function ops.matmul_all_reduce(out, a, b, o)
    ctx.ops.matmul(out, a, b)
    return ctx.ccl.all_reduce(out, out)
  end

  -- This rank's product, then `collective` of it into out along o.dim.
  local function product_then(collective)
    return function(out, a, b, o)
      local p = product(a, b, out.dtype)
      ctx.ccl[collective](out, p, { dim = o.dim })
      p:free()
      return out
    end
  end
  ops.matmul_all_gather = product_then("all_gather")
  ops.matmul_reduce_scatter = product_then("reduce_scatter")

  function ops.all_gather_matmul(out, a, b, o)
    local gathered = ctx:empty({ a:shape()[1], a:shape()[2] * ctx.world_size }, a.dtype)
    ctx.ccl.all_gather(gathered, a, { dim = 2 })
    ctx.ops.matmul(out, gathered, b)
    gathered:free()
    return out
  end

  for name, op in pairs(ops) do
    ops[name] = function(...)
      refuse_in_capture("ctx.ops." .. name)
      return op(...)
    end
  end
  return ops
end

return M
