# Helpers to register tests. Every test runs with IRIS_TEST_ENVIRONMENT; the backend comes from
# IRIS_TEST_BACKEND at test time (default cpu), so the same build tests the cpu backend in CI and the
# cuda backend on a GPU machine: IRIS_TEST_BACKEND=cuda ctest.

set(IRIS_TEST_ENVIRONMENT
  "OMPI_ALLOW_RUN_AS_ROOT=1"
  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OMPI_MCA_rmaps_base_oversubscribe=1"
  "IRIS_CACHE_DIR=${PROJECT_BINARY_DIR}/kernel-cache"
  "IRIS_CROSS_COMPILE=${IRIS_TEST_CROSS_COMPILE}"  # NVRTC/hiprtc compile every kernel too (cmake/IrisDeviceSources.cmake)
  "NCCL_NVLS_ENABLE=0")

# The tests of jobs over simulated nodes (docs/multinode.md): on the cpu backend whatever the test backend
# (GPUs across nodes need a CUDA-aware MPI: tests/gpu/run_nodes.sh), nodes of 2 ranks, and Open MPI's
# osc ucx, which needs no single-copy mechanism (the tests run without one; osc rdma would need it).
set(IRIS_NODES_ENVIRONMENT "IRIS_BACKEND=cpu" "IRIS_NODE_SIZE=2" "OMPI_MCA_osc=ucx")

# The launcher line for N ranks. --oversubscribe: CI has 2 cores and runs 4 ranks.
set(IRIS_MPIRUN ${IRIS_MPIEXEC} --oversubscribe --bind-to none)

set(IRIS_TEST_WRAPPER ${PROJECT_SOURCE_DIR}/tests/with_backend.sh)

# iris_catch2_tests(<target> <sources...>): a Catch2 test program over every layer of iris-lua (it
# exports the iris_* functions, as iris-lua does, so embedded Lua reaches them).
# Catch2's implementation is one library they share (tests/catch2_impl.cpp); each has its own main.cpp.
function(iris_catch2_tests target)
  if(NOT TARGET iris_catch2_impl)
    add_library(iris_catch2_impl STATIC ${PROJECT_SOURCE_DIR}/tests/catch2_impl.cpp)
    target_link_libraries(iris_catch2_impl PUBLIC Catch2::Catch2)
    target_include_directories(iris_catch2_impl PUBLIC ${PROJECT_SOURCE_DIR}/tests)  # catch2_session.hpp
  endif()
  add_executable(${target} ${ARGN})
  iris_link_layers(${target})
  target_link_libraries(${target} PRIVATE iris_catch2_impl)
endfunction()

# iris_add_mpi_test(<name> <ranks> <command...>)
function(iris_add_mpi_test name np)
  add_test(NAME ${name} COMMAND ${IRIS_TEST_WRAPPER} ${IRIS_MPIRUN} -np ${np} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${IRIS_TEST_ENVIRONMENT}" LABELS "mpi" TIMEOUT 300)
endfunction()

# iris_add_script_test(<name> RANKS <n...> [LABELS ...] [TIMEOUT s] COMMAND <args after iris-lua...>)
# Runs `iris-lua args...` at each rank count (1 rank: without mpirun).
function(iris_add_script_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "RANKS;LABELS;COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  foreach(np IN LISTS ARG_RANKS)
    if(np EQUAL 1)
      add_test(NAME ${name}/np1 COMMAND ${IRIS_TEST_WRAPPER} $<TARGET_FILE:iris-lua> ${ARG_COMMAND})
    else()
      add_test(NAME ${name}/np${np} COMMAND ${IRIS_TEST_WRAPPER} ${IRIS_MPIRUN} -np ${np} $<TARGET_FILE:iris-lua> ${ARG_COMMAND})
    endif()
    set_tests_properties(${name}/np${np} PROPERTIES ENVIRONMENT "${IRIS_TEST_ENVIRONMENT}"
                         LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
  endforeach()
endfunction()

# iris_cli_test(<name> [RANKS n] [EXIT code] [STDOUT regex...] [STDERR regex...] [NOT_STDERR regex]
#               [MAX_SECONDS s] [STDIN file] [LABELS label...] [ENVIRONMENT VAR=value...]
#               [GROUP g] [WORKDIR dir] [CPU_ONLY why] ARGS <iris-lua arguments...> | COMMAND <command line...>)
# Runs iris-lua with ARGS (under mpirun when RANKS > 1), or COMMAND (a script that drives iris-lua
# itself), in WORKDIR (default tests/cli), and checks its exit code, output (every regex must match)
# and duration. The test is GROUP/<name> (default cli); LABELS default to cli; ENVIRONMENT adds to
# IRIS_TEST_ENVIRONMENT. CPU_ONLY: what the test checks holds on the cpu backend alone (why); on
# another backend (IRIS_TEST_BACKEND) it is skipped with that reason.
function(iris_cli_test name)
  cmake_parse_arguments(ARG "" "RANKS;EXIT;NOT_STDERR;MAX_SECONDS;STDIN;GROUP;WORKDIR;CPU_ONLY"
                        "ARGS;COMMAND;STDOUT;STDERR;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT ARG_GROUP)
    set(ARG_GROUP cli)
  endif()
  if(NOT ARG_WORKDIR)
    set(ARG_WORKDIR ${PROJECT_SOURCE_DIR}/tests/cli)
  endif()
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1)
  endif()
  if(NOT DEFINED ARG_EXIT)
    set(ARG_EXIT 0)
  endif()
  if(NOT ARG_MAX_SECONDS)
    set(ARG_MAX_SECONDS 60)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS cli)
  endif()
  if(ARG_COMMAND)
    set(command ${ARG_COMMAND})
  elseif(ARG_RANKS EQUAL 1)
    set(command $<TARGET_FILE:iris-lua> ${ARG_ARGS})
  else()
    set(command ${IRIS_MPIRUN} -np ${ARG_RANKS} $<TARGET_FILE:iris-lua> ${ARG_ARGS})
  endif()
  # Lists travel inside -D arguments separated by @@.
  string(REPLACE ";" "@@" command "${command}")
  string(REPLACE ";" "@@" ARG_STDOUT "${ARG_STDOUT}")
  string(REPLACE ";" "@@" ARG_STDERR "${ARG_STDERR}")
  add_test(NAME ${ARG_GROUP}/${name}
    COMMAND ${IRIS_TEST_WRAPPER} ${CMAKE_COMMAND}
      "-DCOMMAND=${command}" "-DEXPECT_EXIT=${ARG_EXIT}" "-DEXPECT_STDOUT=${ARG_STDOUT}"
      "-DEXPECT_STDERR=${ARG_STDERR}" "-DREJECT_STDERR=${ARG_NOT_STDERR}" "-DMAX_SECONDS=${ARG_MAX_SECONDS}"
      "-DSTDIN=${ARG_STDIN}" "-DCPU_ONLY=${ARG_CPU_ONLY}"
      -P ${PROJECT_SOURCE_DIR}/tests/cli/run_and_check.cmake
    WORKING_DIRECTORY ${ARG_WORKDIR})
  math(EXPR timeout "${ARG_MAX_SECONDS} + 30")
  set(environment ${IRIS_TEST_ENVIRONMENT} ${ARG_ENVIRONMENT})
  set_tests_properties(${ARG_GROUP}/${name} PROPERTIES ENVIRONMENT "${environment}" LABELS "${ARG_LABELS}"
                       TIMEOUT ${timeout})
  if(ARG_CPU_ONLY)
    set_tests_properties(${ARG_GROUP}/${name} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped on the [a-z]+ backend: ")
  endif()
endfunction()

# iris_device_fault_pattern(<var> <kernel> <origin> <rank>): a regex for the words before a device
# fault's own report, as either kind of backend writes them (all three arguments are regexes):
#   cpu:  "device fault in kernel K (ORIGIN) on rank R: "
#   GPUs: "device fault on GPU 0 (NAME): <driver error>, reported by <call>; kernels launched since the
#          last synchronization: [others, ]K (ORIGIN)[ xN][, others]; "   (the rank is the line's prefix)
# What follows is the same on both: the report of a failed wait or collective, if any. (The pattern
# has no ';': iris_cli_test's patterns travel as a CMake list. '.' stands for it.)
function(iris_device_fault_pattern var kernel origin rank)
  set(${var} "device fault (in kernel ${kernel} \\(${origin}\\) on rank ${rank}: |on GPU [^\n]*kernels launched since the last synchronization: [^\n]*${kernel} \\(${origin}\\)[^\n]*. )" PARENT_SCOPE)
endfunction()
