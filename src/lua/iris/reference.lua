-- The library that collectives are measured against in the same run (src/capi/capi_reference.h): NCCL
-- on the cuda backend, RCCL on hip, MPI on cpu. Used by scripts/bench/ccl_bench.lua and the labs'
-- checkers (iris-lua lab); its GEMM (cuBLAS) by scripts/bench/ops_bench.lua.
local ffi = require "ffi"
local from_every_rank = require("iris.broadcast").from_every_rank
local graph = require "iris.graph"
local C = ffi.C

local M = {}

-- Collective: whether what every rank tried (`ok`, else `reason`) worked on all of them, agreed in one
-- exchange; `what` names the agreement. Returns true, or false and this rank's own reason, else that
-- of the first rank that failed ("rank 1: ...").
function M.on_every_rank(ok, reason, what)
  local all = from_every_rank({ ok = ok, reason = reason }, what)
  if not ok then return false, reason end
  for r = 0, C.iris_world_size() - 1 do
    if not all[r].ok then return false, ("rank %d: %s"):format(r, tostring(all[r].reason)) end
  end
  return true
end

-- Collective: opens the backend's reference library on every rank. Returns { name = "NCCL", handle }
-- or, when any rank cannot open it, { name = "none", why = "rank 1: ..." } on every rank.
function M.open(ctx)
  local kind = ctx.backend == "cuda" and "nccl" or ctx.backend == "hip" and "rccl" or "mpi"
  local id = ffi.new("uint8_t[128]")
  local ok, reason = true, nil
  if kind ~= "mpi" then
    -- NCCL and RCCL take one rank per GPU (ranks sharing one under MPS: "invalid usage"): said plainly,
    -- and the library not asked.
    local sharing = ffi.new("uint32_t[1]")
    if C.iris_device_sharing(sharing) == 0 and sharing[0] > 1 then
      ok, reason = false, ("%s takes one rank per GPU, and %d ranks share this rank's GPU (run one rank per GPU "
        .. "for the vendor's library)"):format(kind:upper(), sharing[0])
    end
    if ctx.rank == 0 and ok and C.iris_reference_unique_id(kind, id, 128) ~= 0 then
      ok, reason = false, ffi.string(C.iris_last_error())
    end
    local shared = ctx:broadcast({ ok = ok, reason = reason, id = ok and ffi.string(id, 128) or nil }, 0)
    if ok then ok, reason = shared.ok, shared.reason end -- (this rank's own reason first)
    if ok then ffi.copy(id, shared.id, 128) end
  end
  local out = ffi.new("iris_reference*[1]")
  if ok and C.iris_reference_open(kind, id, 128, out) ~= 0 then ok, reason = false, ffi.string(C.iris_last_error()) end
  -- Every rank must agree: one that could not open it takes the reference away from all.
  ok, reason = M.on_every_rank(ok, reason, "iris.reference: opened on every rank?")
  if ok then return { name = kind:upper(), handle = out[0] } end
  if out[0] ~= nil then C.iris_reference_close(out[0]) end
  return { name = "none", why = reason }
end

-- Inside ctx:capture(fn): NCCL and RCCL enqueue on the backend's stream, so the graph holds their
-- kernels (and keeps the tensors); MPI's collectives wait on the host, so they refuse.
local function captured(reference, what, ...)
  if reference.name == "MPI" then
    graph.refuse(what, "MPI's collectives wait on the host (NCCL and RCCL, on a GPU, enqueue on the stream the graph "
      .. "captures)")
  end
  graph.note_launch({ label = ("%s (%s)"):format(what, reference.name) }, ...)
end

-- Runs `collective` on the library (iris_reference_run: counts as each library counts them); raises
-- the library's error.
function M.run(reference, collective, send, recv, count, dtype, op, root, iterations)
  if graph.state.on then captured(reference, "iris.reference.run(" .. collective .. ")", send, recv) end
  if C.iris_reference_run(reference.handle, collective, send:data_ptr(), recv:data_ptr(), count, dtype, op or "sum",
    root or 0, iterations or 1) ~= 0 then
    error(ffi.string(C.iris_last_error()), 0)
  end
end

-- The vendor GEMM (cuBLAS on the cuda backend, iris_reference_gemm): out = a b + beta out for row-major
-- matrices (2-d tensors or views, one dtype); raises the library's error, or why there is none.
function M.gemm(out, a, b, beta)
  if graph.state.on then graph.note_launch({ label = "iris.reference.gemm (cuBLAS)" }, out, a, b) end
  if C.iris_reference_gemm(out.dtype, out._shape[1], out._shape[2], a._shape[2], a:data_ptr(), a._strides[1],
    b:data_ptr(), b._strides[1], beta or 0, out:data_ptr(), out._strides[1], 1) ~= 0 then
    error(ffi.string(C.iris_last_error()), 0)
  end
end

function M.close(reference)
  if reference.handle then C.iris_reference_close(reference.handle) end
  reference.handle = nil
end

return M
