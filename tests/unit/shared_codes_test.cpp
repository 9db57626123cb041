// The codes and limits the Lua side shares with the device and the host have one definition
// (device/iris/impl/abi.h). The build copies its lists into iris.cdef for Lua (cmake/generate_cdef.cmake);
// here the C preprocessor expands the same lists and every entry is compared with what the Lua side
// reads (iris.codes, iris.dtypes) and with heap::ElementType, so a list the generator misread, or a Lua
// table that drifted from the header, fails this test.
#include <catch2/catch.hpp>

#include <string>

#include "heap/element_types.hpp"
#include "iris/host.hpp"
#include "iris/impl/abi.h"

namespace {

// Lua that checks one entry of each kind against iris.codes (and iris.dtypes for dtypes), and at the end
// that Lua has no entry C lacks.
const char* kChecks = R"(
local ffi = require "ffi"
local codes = require "iris.codes"
local dtypes = require "iris.dtypes"
local seen = { dtype = 0, reduction = 0, variant = 0, collective = 0 }
local function same(what, lua, c)
  if lua ~= c then error(("%s: Lua has %s, C has %s"):format(what, tostring(lua), tostring(c)), 0) end
end
function dtype(name, code, size, kind)
  seen.dtype = seen.dtype + 1
  same("dtype " .. name .. " code", codes.DTYPE[name], code)
  same("dtype " .. name .. " position", codes.dtypes[seen.dtype] and codes.dtypes[seen.dtype].name, name)
  same("dtype " .. name .. " size", codes.dtype[name].size, size)
  same("dtype " .. name .. " kind", codes.dtype[name].kind, kind)
  same("iris.dtypes " .. name .. " size", dtypes.info[name] and dtypes.info[name].size, size)
  same("iris.dtypes " .. name .. " kind", dtypes.info[name].kind, kind)
  same("iris.dtypes " .. name .. " storage", ffi.sizeof(dtypes.info[name].ctype), size)
  same("iris.dtypes names " .. seen.dtype, dtypes.names[seen.dtype], name)
end
function reduction(name, code, domain)
  seen.reduction = seen.reduction + 1
  same("reduction " .. name .. " code", codes.REDUCTION[name], code)
  same("reduction " .. name .. " domain", codes.reduction[name].domain, domain)
end
function variant(name, code)
  seen.variant = seen.variant + 1
  same("variant " .. name .. " code", codes.VARIANT[name], code)
end
function collective(name, code, family, variants)
  seen.collective = seen.collective + 1
  same("collective " .. name .. " code", codes.COLLECTIVE[name], code)
  same("collective " .. name .. " family", codes.collective[name].family, family)
  same("collective " .. name .. " variants", table.concat(codes.collective[name].variants, " "), variants)
end
function limit(name, value) same(name, ffi.C[name], value) end
function finish()
  for list, n in pairs(seen) do same("entries of " .. list, #codes[list .. "s"], n) end
  same("dtypes", #dtypes.names, seen.dtype)
end
)";

std::string quoted(const char* s) { return std::string("\"") + s + "\""; }

// One Lua call per entry of each list, as the C preprocessor expands it.
std::string entries() {
  std::string lua;
#define DTYPE(name, code, bytes, kind) \
  lua += "dtype(" + quoted(#name) + ", " + std::to_string(code) + ", " + std::to_string(bytes) + ", " + quoted(#kind) + ")\n";
  IRIS_DTYPE_CODES(DTYPE)
#undef DTYPE
#define REDUCTION(name, code, domain) \
  lua += "reduction(" + quoted(#name) + ", " + std::to_string(code) + ", " + quoted(#domain) + ")\n";
  IRIS_REDUCTION_CODES(REDUCTION)
#undef REDUCTION
#define VARIANT(name, code) lua += "variant(" + quoted(#name) + ", " + std::to_string(code) + ")\n";
  IRIS_VARIANT_CODES(VARIANT)
#undef VARIANT
#define COLLECTIVE(name, code, family, variants) \
  lua += "collective(" + quoted(#name) + ", " + std::to_string(code) + ", " + quoted(#family) + ", " + #variants + ")\n";
  IRIS_COLLECTIVE_CODES(COLLECTIVE)
#undef COLLECTIVE
  return lua;
}

}  // namespace

TEST_CASE("every code and limit the Lua side reads is the device's (impl/abi.h)", "[unit][codes]") {
  iris::Host host;
  REQUIRE(host.run_string(kChecks, "=checks").ok());
  std::string lua = entries();
#define LIMIT(name) lua += std::string("limit(\"" #name "\", ") + std::to_string(name) + ")\n";
  LIMIT(IRIS_MAX_RANKS) LIMIT(IRIS_MAX_BLOCKS) LIMIT(IRIS_MAX_THREADS) LIMIT(IRIS_CCL_LOCKS)
  LIMIT(IRIS_CCL_UNIT_BYTES) LIMIT(IRIS_CCL_TILE_ELEMENTS_GPU) LIMIT(IRIS_CCL_TILE_ELEMENTS_CPU)
  LIMIT(IRIS_GEMM_TILE) LIMIT(IRIS_GEMM_THREADS) LIMIT(IRIS_CCL_STATE_OFFSET) LIMIT(IRIS_CCL_STATE_BYTES)
#undef LIMIT
  lua += "finish()\n";
  iris::RunResult r = host.run_string(lua, "=entries");
  INFO(r.message);
  CHECK(r.ok());
  host.finish();
}

TEST_CASE("heap::ElementType's values, sizes and names are the dtype codes", "[unit][codes]") {
  using iris::heap::ElementType;
#define DTYPE(name, code, bytes, kind)                                                   \
  CHECK(static_cast<int>(iris::heap::element_type_named(#name)) == code);                \
  CHECK(iris::heap::element_size(static_cast<ElementType>(code)) == bytes);              \
  CHECK(iris::heap::is_floating(static_cast<ElementType>(code)) == (std::string(#kind) == "float"));
  IRIS_DTYPE_CODES(DTYPE)
#undef DTYPE
}
