# The compile pipeline's build-time inputs (used in src/CMakeLists.txt): the device header
# (device/iris/**) and iris's own kernels (kernels/**/*.hip), embedded into the binary, so iris-lua
# compiles kernels on machines where the source tree is not; and the targets the test suite
# cross-compiles every kernel for.

# iris_embed_device_sources(<target>): generates device_sources.cpp (kEmbeddedDeviceSources, see
# src/compiler/device_sources.hpp) from every file under device/ and kernels/.
function(iris_embed_device_sources target)
  file(GLOB_RECURSE device_files CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/device
       ${PROJECT_SOURCE_DIR}/device/*.h ${PROJECT_SOURCE_DIR}/device/*.hpp)
  file(GLOB_RECURSE kernel_files CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/kernels/*.hip)
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
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_device_sources.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/embed_device_sources.cmake
    COMMENT "Embedding the device header and iris's kernels"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()

# The targets the test suite cross-compiles every kernel for (IRIS_CROSS_COMPILE in the tests'
# environment, cmake/IrisTesting.cmake): those whose run-time compiler is installed where this is
# configured, marked optional ("?"), so a build carried to a machine without that compiler (the NVIDIA
# GPU machines have no hiprtc) leaves them out there instead of failing every compile.
find_library(IRIS_NVRTC_LIBRARY NAMES nvrtc libnvrtc.so.13 libnvrtc.so.12
             HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES lib64 lib)
find_library(IRIS_HIPRTC_LIBRARY NAMES hiprtc amdhip64 HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES lib)
set(iris_cross_default "")
if(IRIS_NVRTC_LIBRARY)
  # sm_90a, as an H100 or H200 compiles (cuda_backend.cpp): the target whose iris::gemm takes wgmma.
  list(APPEND iris_cross_default "cuda:sm_90a?")
endif()
if(IRIS_HIPRTC_LIBRARY)
  list(APPEND iris_cross_default "hip:gfx90a?")
endif()
string(REPLACE ";" "," iris_cross_default "${iris_cross_default}")
set(IRIS_TEST_CROSS_COMPILE "${iris_cross_default}" CACHE STRING
    "IRIS_CROSS_COMPILE for the test suite: every kernel the tests compile is also compiled for these targets")
message(STATUS "iris: tests cross-compile kernels for: ${IRIS_TEST_CROSS_COMPILE}")
