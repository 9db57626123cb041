# Finds every dependency the standard way and says which Debian package to install when one is missing.
# Required: LuaJIT 2.1 (library and the luajit compiler for embedding Lua), Open MPI, Threads,
# Boost.Context (fibers of the cpu executor), xxHash (kernel cache keys).
# Optional: CUDA toolkit headers (cuda backend), HIP (hip backend), Catch2 v2 (tests), libedit (REPL).

find_package(Threads REQUIRED)

# --- LuaJIT ---------------------------------------------------------------------------------------
find_path(LUAJIT_INCLUDE_DIR luajit.h PATH_SUFFIXES luajit-2.1)
if(IRIS_STATIC_LUAJIT)
  find_library(LUAJIT_LIBRARY NAMES libluajit-5.1.a luajit-5.1)
else()
  find_library(LUAJIT_LIBRARY NAMES luajit-5.1)
endif()
find_program(LUAJIT_EXECUTABLE NAMES luajit)
if(NOT LUAJIT_INCLUDE_DIR OR NOT LUAJIT_LIBRARY)
  message(FATAL_ERROR "LuaJIT 2.1 not found: install the Debian package libluajit-5.1-dev")
endif()
if(NOT LUAJIT_EXECUTABLE)
  message(FATAL_ERROR "the luajit compiler (to embed the Lua sources) was not found: install the Debian package luajit")
endif()
add_library(iris_luajit INTERFACE)
target_include_directories(iris_luajit INTERFACE ${LUAJIT_INCLUDE_DIR})
target_link_libraries(iris_luajit INTERFACE ${LUAJIT_LIBRARY} ${CMAKE_DL_LIBS} m)
message(STATUS "iris: LuaJIT ${LUAJIT_LIBRARY}")
# LuaJIT's own jit.* modules (jit/v.lua, jit/dump.lua, the disassemblers: what -jv and -jdump load) are
# Lua files of the distro's package (Debian: libluajit-5.1-common), not part of the library; iris-lua
# compiles them in (src/CMakeLists.txt) so -jv works where LuaJIT is not installed. Found where the
# luajit that builds the binary finds them; without them -jv says it needs them.
if(NOT DEFINED IRIS_LUAJIT_JIT_DIR)
  execute_process(COMMAND ${LUAJIT_EXECUTABLE} -e
                    "io.write((package.searchpath('jit.v', package.path) or ''):match('^(.*)/jit/v%.lua$') or '')"
                  OUTPUT_VARIABLE found RESULT_VARIABLE status ERROR_QUIET)
  if(NOT status EQUAL 0 OR NOT EXISTS "${found}/jit/v.lua")
    set(found "")
  endif()
  set(IRIS_LUAJIT_JIT_DIR "${found}" CACHE PATH "folder holding LuaJIT's jit/*.lua, compiled into iris-lua (empty: none)")
endif()
if(IRIS_LUAJIT_JIT_DIR)
  message(STATUS "iris: LuaJIT's jit.* modules from ${IRIS_LUAJIT_JIT_DIR}/jit")
else()
  message(STATUS "iris: LuaJIT's jit/*.lua not found (install libluajit-5.1-common): -jv and -jdump need them at run time")
endif()

# --- MPI ------------------------------------------------------------------------------------------
find_package(MPI COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(FATAL_ERROR "MPI not found: install the Debian packages libopenmpi-dev openmpi-bin")
endif()
find_program(IRIS_MPIEXEC NAMES mpirun mpiexec)

# --- Boost.Context (linked statically: the GPU machines lack Boost) and xxHash (header-only) --------
find_path(IRIS_BOOST_INCLUDE_DIR boost/context/detail/fcontext.hpp)
find_library(IRIS_BOOST_CONTEXT_LIBRARY NAMES libboost_context.a boost_context)
if(NOT IRIS_BOOST_INCLUDE_DIR OR NOT IRIS_BOOST_CONTEXT_LIBRARY)
  message(FATAL_ERROR "Boost.Context not found: install the Debian package libboost-context-dev")
endif()
find_path(IRIS_XXHASH_INCLUDE_DIR xxhash.h)
if(NOT IRIS_XXHASH_INCLUDE_DIR)
  message(FATAL_ERROR "xxhash.h not found: install the Debian package libxxhash-dev")
endif()

# --- CUDA (headers only: libcuda and libnvrtc are opened at run time) -----------------------------
set(IRIS_HAVE_CUDA OFF)
if(IRIS_WITH_CUDA)
  find_path(CUDA_DRIVER_INCLUDE_DIR cuda.h
            HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES include)
  find_path(NVRTC_INCLUDE_DIR nvrtc.h
            HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES include)
  if(CUDA_DRIVER_INCLUDE_DIR AND NVRTC_INCLUDE_DIR)
    set(IRIS_HAVE_CUDA ON)
    message(STATUS "iris: cuda backend on (headers in ${CUDA_DRIVER_INCLUDE_DIR}; libcuda and libnvrtc load at run time)")
  else()
    message(STATUS "iris: cuda backend left out: cuda.h/nvrtc.h not found (install the CUDA toolkit or set CUDA_HOME)")
  endif()
endif()

# --- HIP ------------------------------------------------------------------------------------------
set(IRIS_HAVE_HIP OFF)
if(IRIS_WITH_HIP)
  find_path(HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES include)
  find_library(HIP_LIBRARY amdhip64 HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES lib)
  if(HIP_INCLUDE_DIR AND HIP_LIBRARY)
    set(IRIS_HAVE_HIP ON)
    message(STATUS "iris: hip backend on (${HIP_LIBRARY})")
  else()
    message(STATUS "iris: hip backend left out: HIP not found (install the Debian package libamdhip64-dev)")
  endif()
endif()

# --- libedit (REPL line editing) ------------------------------------------------------------------
# Linked statically by default (docs/decisions.md): the GPU machines' image may lack libedit2 and
# libbsd0; libtinfo (which libedit's terminal handling needs) is on every Debian and Ubuntu system.
find_path(LIBEDIT_INCLUDE_DIR histedit.h)
if(IRIS_STATIC_LIBEDIT)
  find_library(LIBEDIT_STATIC_LIBRARY NAMES libedit.a)
  find_library(LIBBSD_STATIC_LIBRARY NAMES libbsd.a)  # strlcpy and vis(3), which libedit uses
  find_library(TINFO_LIBRARY NAMES tinfo)
  set(LIBEDIT_LINK ${LIBEDIT_STATIC_LIBRARY} ${LIBBSD_STATIC_LIBRARY} ${TINFO_LIBRARY}
      "-Wl,--exclude-libs,libedit.a:libbsd.a")  # their symbols stay private to the executable
  set(libedit_parts LIBEDIT_INCLUDE_DIR LIBEDIT_STATIC_LIBRARY LIBBSD_STATIC_LIBRARY TINFO_LIBRARY)
else()
  find_library(LIBEDIT_LIBRARY NAMES edit)
  set(LIBEDIT_LINK ${LIBEDIT_LIBRARY})
  set(libedit_parts LIBEDIT_INCLUDE_DIR LIBEDIT_LIBRARY)
endif()
set(IRIS_HAVE_LIBEDIT ON)
foreach(part IN LISTS libedit_parts)
  if(NOT ${part})
    set(IRIS_HAVE_LIBEDIT OFF)
  endif()
endforeach()
if(IRIS_HAVE_LIBEDIT)
  add_library(iris_libedit INTERFACE)
  target_include_directories(iris_libedit INTERFACE ${LIBEDIT_INCLUDE_DIR})
  target_link_libraries(iris_libedit INTERFACE ${LIBEDIT_LINK})
  message(STATUS "iris: REPL line editing with ${LIBEDIT_LINK}")
else()
  message(STATUS "iris: REPL without line editing: libedit not found (install the Debian package "
                 "libedit-dev, which brings libbsd-dev and libncurses-dev)")
endif()

# --- Catch2 (tests) -------------------------------------------------------------------------------
if(IRIS_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "Catch2 v2 not found: install the Debian package catch2 (or configure with -DIRIS_BUILD_TESTS=OFF)")
  endif()
endif()
