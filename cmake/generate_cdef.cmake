# cmake -DOUTPUT=iris/cdef.lua -DHEADERS="a.h;b.h" -P generate_cdef.cmake
# See iris_generate_cdef() in IrisEmbedLua.cmake.
set(declarations "")
set(abi_version "")
foreach(header IN LISTS HEADERS)
  file(READ ${header} text)
  string(REGEX MATCH "#define IRIS_ABI_VERSION ([0-9]+)" found "${text}")
  if(found)
    set(abi_version ${CMAKE_MATCH_1})
  endif()
  string(FIND "${text}" "/* cdef:begin */" begin)
  string(FIND "${text}" "/* cdef:end */" end)
  if(begin EQUAL -1 OR end EQUAL -1)
    message(FATAL_ERROR "${header}: no /* cdef:begin */ ... /* cdef:end */ section")
  endif()
  math(EXPR begin "${begin} + 16")
  math(EXPR length "${end} - ${begin}")
  string(SUBSTRING "${text}" ${begin} ${length} section)
  get_filename_component(name ${header} NAME)
  string(APPEND declarations "/* ${name} */${section}")
endforeach()
if(abi_version STREQUAL "")
  message(FATAL_ERROR "no header defines IRIS_ABI_VERSION")
endif()
file(WRITE ${OUTPUT} "-- Generated from src/capi/*.h and device/iris/impl/abi.h by cmake/generate_cdef.cmake: every C
-- function and type the Lua side uses.
local ffi = require \"ffi\"
ffi.cdef [[
${declarations}]]
return { abi_version = ${abi_version} }
")
