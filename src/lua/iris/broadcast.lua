-- ctx:broadcast(value [, root]): root's value on every rank (docs/memory.md, "Context services").
--
-- Lua values (nil, booleans, numbers, strings and tables of those, nested, any keys of those types)
-- are serialized on the root, sent as bytes (iris.exchange) and rebuilt elsewhere; the root
-- gets its own value back. A tensor is broadcast in place: every other rank copies the root's
-- elements straight out of the root's heap (the same offset there), between two barriers.
local ffi = require "ffi"
local errors = require "iris.errors"
local tensor = require "iris.tensor"
local between_ranks = require "iris.exchange"
local trace = require "iris.trace"
local graph = require "iris.graph"
local C = ffi.C

local M = {}

-- The root sends SENT .. its serialized value, or FAILED .. why it could not serialize it.
local SENT, FAILED = "=", "!"

---------------------------------------------------------------------------------------------------
-- Serialization: n | T | F | d<%.17g>; | s<len>:<bytes> | t<key><value>...e

local function encode(value, out, seen, path)
  local kind = type(value)
  if kind == "nil" then
    out[#out + 1] = "n"
  elseif kind == "boolean" then
    out[#out + 1] = value and "T" or "F"
  elseif kind == "number" then
    if value ~= value then
      out[#out + 1] = "dnan;"
    else
      out[#out + 1] = ("d%.17g;"):format(value)
    end
  elseif kind == "string" then
    out[#out + 1] = "s" .. #value .. ":"
    out[#out + 1] = value
  elseif kind == "table" and not tensor.is_tensor(value) then
    if seen[value] then error(("the table at %s contains itself"):format(path), 0) end
    seen[value] = true
    out[#out + 1] = "t"
    for k, v in pairs(value) do
      local key_path = path .. "[" .. (type(k) == "string" and ("%q"):format(k) or tostring(k)) .. "]"
      encode(k, out, seen, key_path .. " (key)")
      encode(v, out, seen, key_path)
    end
    out[#out + 1] = "e"
    seen[value] = nil
  else
    local what = tensor.is_tensor(value) and "a tensor inside a table (broadcast the tensor itself)" or ("a " .. kind)
    error(("cannot send %s at %s: only nil, booleans, numbers, strings and tables of those travel"):format(what, path), 0)
  end
end

local function decode(data, pos)
  local tag = data:sub(pos, pos)
  if tag == "n" then return nil, pos + 1 end
  if tag == "T" then return true, pos + 1 end
  if tag == "F" then return false, pos + 1 end
  if tag == "d" then
    local stop = data:find(";", pos, true)
    local text = data:sub(pos + 1, stop - 1)
    return text == "nan" and 0 / 0 or tonumber(text), stop + 1
  end
  if tag == "s" then
    local colon = data:find(":", pos, true)
    local length = tonumber(data:sub(pos + 1, colon - 1))
    return data:sub(colon + 1, colon + length), colon + 1 + length
  end
  if tag == "t" then
    local t = {}
    pos = pos + 1
    while data:sub(pos, pos) ~= "e" do
      local k, v
      k, pos = decode(data, pos)
      v, pos = decode(data, pos)
      t[k] = v
    end
    return t, pos + 1
  end
  error(("ctx:broadcast: corrupt data at byte %d"):format(pos), 0)
end

M.serialize = function(value)
  local out = {}
  encode(value, out, {}, "value")
  return table.concat(out)
end
M.deserialize = function(data) return (decode(data, 1)) end

---------------------------------------------------------------------------------------------------

local args_of_all = ffi.new("uint64_t[?]", 4096)

local function check_root(self, root)
  if root == nil then return 0 end
  if type(root) ~= "number" or root % 1 ~= 0 or root < 0 or root >= self.world_size then
    errors.raise("invalid_argument", "ctx:broadcast: root must be a rank from 0 to %d, got %s", self.world_size - 1,
      tostring(root))
  end
  return root
end

local function broadcast_tensor(self, t, root)
  tensor.check_live(t, "ctx:broadcast", true)
  local op = ("ctx:broadcast(tensor, root=%d)"):format(root)
  errors.check_waiting(C.iris_synchronize) -- the root's elements are final before anyone reads them
  errors.check_waiting(C.iris_announce, op, t:offset(), args_of_all)
  for r = 0, self.world_size - 1 do
    if args_of_all[r] ~= args_of_all[root] then
      errors.raise("invalid_argument", "ctx:broadcast: ranks passed different tensors: rank %d's is at heap offset %d, "
        .. "rank %d's at %d", root, tonumber(args_of_all[root]), r, tonumber(args_of_all[r]))
    end
  end
  if self.rank ~= root then t:copy(tensor.peer_view(t, root)) end
  -- the root may change its elements again only once every rank has copied them
  errors.check_waiting(C.iris_barrier, op)
  return t
end

-- ctx:broadcast (iris.context attaches it and checks that it is called on the context).
function M.broadcast(self, value, root)
  if graph.state.on then graph.refuse("ctx:broadcast()") end
  root = check_root(self, root)
  if trace.state.on then trace.note_origin() end
  if tensor.is_tensor(value) then return broadcast_tensor(self, value, root) end
  local op = ("ctx:broadcast(root=%d)"):format(root)
  local mine = ""
  if self.rank == root then
    local ok, result = pcall(M.serialize, value)
    mine = (ok and SENT or FAILED) .. tostring(result)
  end
  local data = between_ranks.exchange(between_ranks.JOB, between_ranks.FROM_ROOT, root, op, mine)[root]
  if data:sub(1, 1) == FAILED then
    if self.rank == root then errors.raise("invalid_argument", "ctx:broadcast: %s", data:sub(2)) end
    errors.raise("invalid_argument", "ctx:broadcast: rank %d could not send its value (its own error says why)", root)
  end
  if self.rank == root then return value end
  return M.deserialize(data:sub(2))
end

-- Every rank's `value` (what ctx:broadcast sends), as a table indexed by rank from 0: one exchange that
-- brings each rank every rank's (TO_ALL), where a broadcast from each rank in turn takes world_size.
-- `op` names it in the message of a rank that is in another collective. For iris's own agreements
-- (iris.reference, the labs' slowest rank); raises on every rank when one could not send its value.
function M.from_every_rank(value, op)
  local ok, result = pcall(M.serialize, value)
  local all = between_ranks.exchange(between_ranks.JOB, between_ranks.TO_ALL, 0, op,
    (ok and SENT or FAILED) .. tostring(result))
  local out = {}
  for r = 0, C.iris_world_size() - 1 do
    if all[r]:sub(1, 1) == FAILED then
      errors.raise("invalid_argument", "%s: rank %d could not send its value: %s", op, r, all[r]:sub(2))
    end
    out[r] = M.deserialize(all[r]:sub(2))
  end
  return out
end

-- The largest of every rank's number, or for a list of numbers (the same length on every rank) the
-- largest of each entry: the slowest rank's times, in one exchange. `op` as from_every_rank's.
function M.slowest(value, op)
  local all = M.from_every_rank(value, op)
  local worst = type(value) == "table" and {} or -math.huge
  for r = 0, C.iris_world_size() - 1 do
    if type(value) == "table" then
      for i, v in ipairs(all[r]) do worst[i] = math.max(worst[i] or -math.huge, v) end
    else
      worst = math.max(worst, all[r])
    end
  end
  return worst
end

return M
