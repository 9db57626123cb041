-- tostring(t) in the style of torch:
--   tensor([[0., 0., 0.],
--           [0., 0., 0.]])
--   tensor([1.5000, 2.2500], dtype=float16)
-- More than 1000 elements are summarised: the first and last 3 entries of each dimension, "..." between.
-- Floats print like integers when every shown value is whole ("1."), else with 4 decimals, or in
-- scientific notation when the magnitudes span too much; every entry is padded to one width.
local M = {}

local THRESHOLD = 1000
local EDGE = 3

-- dtypes torch leaves unnamed; the others are named after the values.
local IMPLIED_DTYPE = { float32 = true, int64 = true, bool = true }

-- The indices shown along a dimension of `size`: all, or the edges with false for "...".
local function shown_indices(size, summarise)
  local list = {}
  if summarise and size > 2 * EDGE then
    for i = 1, EDGE do list[#list + 1] = i end
    list[#list + 1] = false
    for i = size - EDGE + 1, size do list[#list + 1] = i end
  else
    for i = 1, size do list[#list + 1] = i end
  end
  return list
end

-- Chooses how floats print, from the finite values shown (torch's _Formatter rules).
local function float_style(values)
  local whole, lo, hi = true, math.huge, 0
  local any = false
  for _, v in ipairs(values) do
    if v == v and v ~= math.huge and v ~= -math.huge then
      any = true
      local a = math.abs(v)
      if v % 1 ~= 0 then whole = false end
      if a ~= 0 then
        if a < lo then lo = a end
        if a > hi then hi = a end
      end
    end
  end
  if not any or whole then
    if any and hi > 1e8 then return "%.4e" end
    return "whole"
  end
  if hi / lo > 1000 or hi > 1e8 or lo < 1e-4 then return "%.4e" end
  return "%.4f"
end

local function format_value(v, kind, style)
  if kind == "bool" then return v and "true" or "false" end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  if kind == "int" then return ("%.0f"):format(v) end
  if style == "whole" then return ("%.0f."):format(v) end
  return style:format(v)
end

function M.format(t)
  if t._alloc[1] ~= 0 then return "tensor(<freed>)" end
  local nd, dims = t._ndim, t._shape
  local suffix = IMPLIED_DTYPE[t.dtype] and "" or (", dtype=" .. t.dtype)
  if t._numel == 0 then
    local size = ""
    if nd ~= 1 then size = ", size=(" .. table.concat(dims, ", ") .. ")" end
    return "tensor([]" .. size .. suffix .. ")"
  end
  local summarise = t._numel > THRESHOLD
  local kind = t._dt.kind

  -- The shown elements in row-major order, read one by one when summarised (a few dozen), else all.
  local index_lists = {}
  for d = 1, nd do index_lists[d] = shown_indices(dims[d], summarise) end
  local values
  if summarise then
    values = {}
    local function collect(d, indices)
      if d > nd then
        values[#values + 1] = t:get(unpack(indices))
        return
      end
      for _, i in ipairs(index_lists[d]) do
        if i then
          indices[d] = i
          collect(d + 1, indices)
        end
      end
    end
    collect(1, {})
  else
    values = t:to_table() -- every element is shown, in this order
  end

  local style = kind == "float" and float_style(values) or nil
  local texts, width = {}, 0
  for k, v in ipairs(values) do
    texts[k] = format_value(v, kind, style)
    if #texts[k] > width then width = #texts[k] end
  end
  for k, s in ipairs(texts) do texts[k] = (" "):rep(width - #s) .. s end

  if nd == 0 then return "tensor(" .. texts[1] .. suffix .. ")" end
  local next_text = 0
  local function render(d, indent)
    local parts = {}
    for _, i in ipairs(index_lists[d]) do
      if not i then
        parts[#parts + 1] = d == nd and " ..." or "..."
      elseif d == nd then
        next_text = next_text + 1
        parts[#parts + 1] = texts[next_text]
      else
        parts[#parts + 1] = render(d + 1, indent .. " ")
      end
    end
    if d == nd then return "[" .. table.concat(parts, ", ") .. "]" end
    return "[" .. table.concat(parts, "," .. ("\n"):rep(nd - d) .. indent .. " ") .. "]"
  end
  return "tensor(" .. render(1, "       ") .. suffix .. ")"
end

return M
