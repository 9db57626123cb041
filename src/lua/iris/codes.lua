-- The codes the Lua side shares with the device and the host: dtypes, reductions, variants and
-- collectives. Their one definition is the X-macro lists of device/iris/impl/abi.h, which the build
-- copies into iris.cdef (cmake/generate_cdef.cmake); this module names their fields. The limits are
-- enumerators of the same header: read them as ffi.C.IRIS_MAX_RANKS and the like.
--
--   codes.DTYPE.float32 == 10        name -> code, for each vocabulary: DTYPE, REDUCTION, VARIANT, COLLECTIVE
--   codes.dtypes[i]                  the entries in the header's order: {name=, code=, size=, kind=}
--   codes.reductions[i]              {name=, code=, domain=}  ("any", or "int": integers and bool)
--   codes.variants[i]                {name=, code=}
--   codes.collectives[i]             {name=, code=, family= "ccl" or "ops", variants = {names...}}
--   codes.collective.all_reduce      the entry of a collective by name
local lists = require("iris.cdef").codes

local M = {}

-- Each list's fields, in the order of its X(...) entries in abi.h.
local FIELDS = {
  dtype = { "name", "code", "size", "kind" },
  reduction = { "name", "code", "domain" },
  variant = { "name", "code" },
  collective = { "name", "code", "family", "variants" },
}

local function read(list_name)
  local fields = FIELDS[list_name]
  local list = lists[list_name]
  assert(list, "iris.cdef has no code list " .. list_name .. " (device/iris/impl/abi.h)")
  local entries, by_name, code_of = {}, {}, {}
  for i, row in ipairs(list) do
    assert(#row == #fields, ("IRIS_%s_CODES entry %d has %d fields, iris.codes expects %d (%s)"):format(
      list_name:upper(), i, #row, #fields, table.concat(fields, ", ")))
    local entry = {}
    for j, field in ipairs(fields) do entry[field] = row[j] end
    entries[i], by_name[entry.name], code_of[entry.name] = entry, entry, entry.code
  end
  return entries, by_name, code_of
end

M.dtypes, M.dtype, M.DTYPE = read("dtype")
M.reductions, M.reduction, M.REDUCTION = read("reduction")
M.variants, M.variant, M.VARIANT = read("variant")
M.collectives, M.collective, M.COLLECTIVE = read("collective")

for _, c in ipairs(M.collectives) do
  local names = {}
  for v in c.variants:gmatch("%S+") do
    assert(M.VARIANT[v], ("collective %s names variant %s, which IRIS_VARIANT_CODES lacks"):format(c.name, v))
    names[#names + 1] = v
  end
  c.variants = names
end

-- The names of a vocabulary's entries, in order: codes.names(codes.dtypes) == {"bool", "int8", ...}.
function M.names(entries)
  local names = {}
  for i, e in ipairs(entries) do names[i] = e.name end
  return names
end

return M
