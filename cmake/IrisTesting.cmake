# Helpers to register tests. Every test runs with IRIS_TEST_ENVIRONMENT; the backend comes from
# IRIS_TEST_BACKEND at test time (default cpu), so the same build tests the cpu backend in CI and the
# cuda backend on a GPU machine: IRIS_TEST_BACKEND=cuda ctest.

set(IRIS_TEST_ENVIRONMENT
  "OMPI_ALLOW_RUN_AS_ROOT=1"
  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OMPI_MCA_rmaps_base_oversubscribe=1"
  "IRIS_CACHE_DIR=${PROJECT_BINARY_DIR}/kernel-cache"
  "IRIS_CROSS_COMPILE=${IRIS_TEST_CROSS_COMPILE}"  # NVRTC/hiprtc compile every kernel too (src/compiler/IrisDeviceSources.cmake)
  "NCCL_NVLS_ENABLE=0")

# The launcher line for N ranks. --oversubscribe: CI has 2 cores and runs 4 ranks.
set(IRIS_MPIRUN ${IRIS_MPIEXEC} --oversubscribe --bind-to none)

set(IRIS_TEST_WRAPPER ${PROJECT_SOURCE_DIR}/tests/with_backend.sh)

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
#               [MAX_SECONDS s] [STDIN file] [LABEL l] [WORKDIR dir] ARGS <iris-lua arguments...>)
# Runs iris-lua (under mpirun when RANKS > 1) and checks its exit code, output (every regex must
# match) and duration. The test is LABEL/<name> (default cli), run in WORKDIR (default tests/cli).
function(iris_cli_test name)
  cmake_parse_arguments(ARG "" "RANKS;EXIT;NOT_STDERR;MAX_SECONDS;STDIN;LABEL;WORKDIR" "ARGS;STDOUT;STDERR" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL cli)
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
  if(ARG_RANKS EQUAL 1)
    set(command $<TARGET_FILE:iris-lua> ${ARG_ARGS})
  else()
    set(command ${IRIS_MPIRUN} -np ${ARG_RANKS} $<TARGET_FILE:iris-lua> ${ARG_ARGS})
  endif()
  # Lists travel inside -D arguments separated by @@.
  string(REPLACE ";" "@@" command "${command}")
  string(REPLACE ";" "@@" ARG_STDOUT "${ARG_STDOUT}")
  string(REPLACE ";" "@@" ARG_STDERR "${ARG_STDERR}")
  add_test(NAME ${ARG_LABEL}/${name}
    COMMAND ${IRIS_TEST_WRAPPER} ${CMAKE_COMMAND}
      "-DCOMMAND=${command}" "-DEXPECT_EXIT=${ARG_EXIT}" "-DEXPECT_STDOUT=${ARG_STDOUT}"
      "-DEXPECT_STDERR=${ARG_STDERR}" "-DREJECT_STDERR=${ARG_NOT_STDERR}" "-DMAX_SECONDS=${ARG_MAX_SECONDS}"
      "-DSTDIN=${ARG_STDIN}"
      -P ${PROJECT_SOURCE_DIR}/tests/cli/run_and_check.cmake
    WORKING_DIRECTORY ${ARG_WORKDIR})
  math(EXPR timeout "${ARG_MAX_SECONDS} + 30")
  set_tests_properties(${ARG_LABEL}/${name} PROPERTIES ENVIRONMENT "${IRIS_TEST_ENVIRONMENT}" LABELS ${ARG_LABEL}
                       TIMEOUT ${timeout})
endfunction()
