#!/bin/sh
# Runs the GPU device tests at <ranks> ranks, after asking the binary whether this machine can run
# them: where it cannot (IRIS_BACKEND is not cuda/hip, no driver, no GPU) the probe prints the reason
# and exits 77, which ctest reports as skipped.
#   run_gpu_test.sh <gpu|ptx> <ranks> <iris_gpu_tests> [Catch2 arguments...]
# IRIS_TEST_MPIRUN: the launcher line for several ranks (set by tests/gpu/CMakeLists.txt).
set -u
requirement=$1 ranks=$2 binary=$3
shift 3
"$binary" --probe "$requirement" || exit $?
if [ "$ranks" -eq 1 ]; then
  exec "$binary" "$@"
fi
# shellcheck disable=SC2086 # the launcher line is a list of words
exec ${IRIS_TEST_MPIRUN:-mpirun} -np "$ranks" "$binary" "$@"
