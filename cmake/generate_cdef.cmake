# cmake -DOUTPUT=iris/cdef.lua -DHEADERS="a.h;b.h" -P generate_cdef.cmake
# See iris_generate_cdef() in IrisEmbedLua.cmake.
#
# Every "/* cdef:begin */ ... /* cdef:end */" section of the headers goes to ffi.cdef. Every
# "#define IRIS_<NAME>_CODES(X)" list between "/* codes:begin */" and "/* codes:end */" (X(a, b, ...)
# entries, one a line; device/iris/impl/abi.h) becomes codes.<name> of the module: a list of its
# entries, each a list of its fields (numbers as numbers, names and "strings" as strings).
cmake_minimum_required(VERSION 3.20)
set(declarations "")
set(abi_version "")
set(codes "")

# The text of `header` between `begin_marker` and `end_marker`, every such section, in `out`.
function(iris_sections text begin_marker end_marker out)
  set(found "")
  string(LENGTH "${begin_marker}" skip)
  while(TRUE)
    string(FIND "${text}" "${begin_marker}" begin)
    if(begin EQUAL -1)
      break()
    endif()
    math(EXPR begin "${begin} + ${skip}")
    string(SUBSTRING "${text}" ${begin} -1 text)
    string(FIND "${text}" "${end_marker}" end)
    if(end EQUAL -1)
      message(FATAL_ERROR "${begin_marker} without ${end_marker}")
    endif()
    string(SUBSTRING "${text}" 0 ${end} section)
    string(APPEND found "${section}")
    string(SUBSTRING "${text}" ${end} -1 text)
  endwhile()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# codes.<name> = { {fields...}, ... } for each X-macro list of `section`.
function(iris_code_lists section header out)
  set(lua "")
  string(REPLACE "\\\n" " " section "${section}") # a #define's continuation lines become one line
  string(REPLACE ";" "," section "${section}")    # (CMake lists split at semicolons)
  string(REPLACE "\n" ";" lines "${section}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^#define IRIS_([A-Z_]+)_CODES\\(X\\)(.*)$")
      continue()
    endif()
    string(TOLOWER "${CMAKE_MATCH_1}" name)
    set(body "${CMAKE_MATCH_2}")
    string(REGEX MATCHALL "X\\([^)]*\\)" entries "${body}")
    if(NOT entries)
      message(FATAL_ERROR "${header}: IRIS_${CMAKE_MATCH_1}_CODES has no X(...) entries")
    endif()
    string(APPEND lua "  ${name} = {\n")
    foreach(entry IN LISTS entries)
      string(REGEX REPLACE "^X\\((.*)\\)$" "\\1" args "${entry}")
      string(REPLACE "," ";" args "${args}")
      set(fields "")
      foreach(arg IN LISTS args)
        string(STRIP "${arg}" arg)
        if(arg MATCHES "^-?[0-9]+$" OR arg MATCHES "^\"[^\"\\\\]*\"$")
          list(APPEND fields "${arg}")
        elseif(arg MATCHES "^[A-Za-z_][A-Za-z_0-9]*$")
          list(APPEND fields "\"${arg}\"")
        else()
          message(FATAL_ERROR "${header}: IRIS_${CMAKE_MATCH_1}_CODES: '${arg}' in ${entry} is not a number, a name or a string")
        endif()
      endforeach()
      list(JOIN fields ", " fields)
      string(APPEND lua "    { ${fields} },\n")
    endforeach()
    string(APPEND lua "  },\n")
  endforeach()
  set(${out} "${lua}" PARENT_SCOPE)
endfunction()

foreach(header IN LISTS HEADERS)
  file(READ ${header} text)
  string(REGEX MATCH "#define IRIS_ABI_VERSION ([0-9]+)" found "${text}")
  if(found)
    set(abi_version ${CMAKE_MATCH_1})
  endif()
  iris_sections("${text}" "/* cdef:begin */" "/* cdef:end */" section)
  if(section STREQUAL "")
    message(FATAL_ERROR "${header}: no /* cdef:begin */ ... /* cdef:end */ section")
  endif()
  get_filename_component(name ${header} NAME)
  string(APPEND declarations "/* ${name} */${section}")
  iris_sections("${text}" "/* codes:begin */" "/* codes:end */" section)
  if(NOT section STREQUAL "")
    iris_code_lists("${section}" ${header} lists)
    string(APPEND codes "${lists}")
  endif()
endforeach()
if(abi_version STREQUAL "")
  message(FATAL_ERROR "no header defines IRIS_ABI_VERSION")
endif()
file(WRITE ${OUTPUT} "-- Generated from src/capi/*.h and device/iris/impl/abi.h by cmake/generate_cdef.cmake: every C
-- function and type the Lua side uses, and the code lists it shares with the device (iris.codes).
local ffi = require \"ffi\"
ffi.cdef [[
${declarations}]]
return {
  abi_version = ${abi_version},
  codes = {
${codes}  },
}
")
