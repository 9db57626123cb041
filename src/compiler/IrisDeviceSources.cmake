# The compile pipeline's build-time inputs (included from src/CMakeLists.txt):
#   - the device header (device/iris/**) and iris's own kernels (kernels/*.hip), embedded into the
#     binary, so iris-lua compiles kernels on machines where the source tree is not;
#   - Boost.Context (fibers of the cpu executor), linked statically: the GPU machines lack Boost;
#   - xxHash (cache keys), header-only.

find_path(IRIS_XXHASH_INCLUDE_DIR xxhash.h)
if(NOT IRIS_XXHASH_INCLUDE_DIR)
  message(FATAL_ERROR "xxhash.h not found: install the Debian package libxxhash-dev")
endif()
find_path(IRIS_BOOST_INCLUDE_DIR boost/context/detail/fcontext.hpp)
find_library(IRIS_BOOST_CONTEXT_LIBRARY NAMES libboost_context.a boost_context)
if(NOT IRIS_BOOST_INCLUDE_DIR OR NOT IRIS_BOOST_CONTEXT_LIBRARY)
  message(FATAL_ERROR "Boost.Context not found: install the Debian package libboost-context-dev")
endif()

# iris_embed_device_sources(<target>): generates device_sources.cpp (kEmbeddedDeviceSources, see
# src/compiler/device_sources.hpp) from every file under device/ and kernels/.
function(iris_embed_device_sources target)
  file(GLOB_RECURSE device_files CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/device
       ${PROJECT_SOURCE_DIR}/device/*.h ${PROJECT_SOURCE_DIR}/device/*.hpp)
  file(GLOB kernel_files CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/kernels/*.hip)
  set(entries "")
  set(inputs "")
  foreach(rel IN LISTS device_files)
    list(APPEND entries "device|${rel}|${PROJECT_SOURCE_DIR}/device/${rel}")
    list(APPEND inputs ${PROJECT_SOURCE_DIR}/device/${rel})
  endforeach()
  foreach(rel IN LISTS kernel_files)
    list(APPEND entries "kernel|${rel}|${PROJECT_SOURCE_DIR}/${rel}")
    list(APPEND inputs ${PROJECT_SOURCE_DIR}/${rel})
  endforeach()
  string(REPLACE ";" "@@" entries "${entries}")
  set(output ${CMAKE_CURRENT_BINARY_DIR}/embedded_device/device_sources.cpp)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${output}" "-DENTRIES=${entries}"
            -P ${PROJECT_SOURCE_DIR}/src/compiler/embed_device_sources.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/src/compiler/embed_device_sources.cmake
    COMMENT "Embedding the device header and iris's kernels"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
  target_include_directories(${target} PRIVATE ${IRIS_XXHASH_INCLUDE_DIR} ${IRIS_BOOST_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC ${IRIS_BOOST_CONTEXT_LIBRARY})
endfunction()
