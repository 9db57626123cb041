#!/bin/bash
# Any part of the test suite on a GPU machine, from a build carried there (tests/gpu/pack_build.sh):
# the build's recorded paths are resolved first (gpu_env.sh), then ctest runs with the cuda backend
# and without the shared-GPU warning (no MPS: a test's deliberate device fault would end every process
# on the GPU under it). For example, the fault injection tests:
#   tests/gpu/run_ctest.sh .carry/build -L fault_injection --output-on-failure
set -u
. "$(dirname "$0")/gpu_env.sh"
resolve_recorded_paths
export IRIS_TEST_BACKEND=${IRIS_TEST_BACKEND:-cuda} IRIS_SHARED_GPU_WARNING=0
shift
exec ctest --test-dir "$build" "$@"
