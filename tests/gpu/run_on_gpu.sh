#!/bin/bash
# Runs iris-lua's tests on a GPU machine in one go, from a build made on the development machine and
# carried there (docs/backends.md, "Running the GPU tests"):
#   1. what the machine is: GPUs, links, driver; the built binaries' libraries all present
#   2. the GPU tests (ctest -L gpu): the backend at 1 rank, 2 ranks and 4 ranks (on a 2-GPU machine:
#      one rank per GPU, then two ranks sharing each GPU), kernels, faults
#   3. the rest of the suite with IRIS_TEST_BACKEND=cuda (ctest -LE gpu), IRIS_SHARED_GPU_WARNING=0
# Logs go to $OUT (the device tool's folder) when set, else <build>/gpu-logs; a compact summary comes
# last. Exit status: 0 when every phase passed.
#
#   tests/gpu/run_on_gpu.sh [build-dir]      (run from anywhere; default build-dir: <repo>/build)
set -u

. "$(dirname "$0")/gpu_env.sh"
summary=$logs/summary.txt
: >"$summary"
export IRIS_TEST_BACKEND=${IRIS_TEST_BACKEND:-cuda}
jobs=${IRIS_CTEST_JOBS:-4}

note() { echo "$*" >>"$summary"; }
progress() { echo "[run_on_gpu] $*"; }

# --- the build was configured elsewhere: make its absolute paths resolve here ----------------------
# CTest files name the source and build folders (and the cmake that ran) by the paths they had on
# the development machine; where those do not exist here, point them at this checkout.
[ -f "$build/CMakeCache.txt" ] || { note "FAILED: $build has no CMakeCache.txt: carry the whole build folder"; exit 2; }
while read -r line; do note "$line"; done < <(resolve_recorded_paths)
ctest=$(command -v ctest) || { note "FAILED: no ctest on this machine"; exit 2; }

progress "1/3 the machine and the binaries' libraries"
# --- 1. the machine ---------------------------------------------------------------------------------
{
  echo "== nvidia-smi -L"; nvidia-smi -L
  echo "== nvidia-smi topo -m"; nvidia-smi topo -m
  echo "== driver"; nvidia-smi --query-gpu=driver_version,name,memory.total --format=csv
  echo "== mpirun"; mpirun --version | head -1
} >"$logs/machine.log" 2>&1
note "machine: $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort -u | tr '\n' ' ')"

missing=0
for binary in "$build/bin/iris-lua" "$build"/tests/iris_unit_tests "$build"/tests/iris_mpi_tests \
              "$build"/tests/gpu/iris_gpu_tests "$build"/tests/gpu/iris_gpu_unit_tests; do
  [ -x "$binary" ] || continue
  not_found=$(ldd "$binary" 2>&1 | grep "not found")
  echo "== ldd $binary"; ldd "$binary"
  if [ -n "$not_found" ]; then
    missing=1
    note "FAILED: $(basename "$binary") needs libraries this machine lacks: $(echo "$not_found" | tr -s ' \t\n' ' ')"
  fi
done >>"$logs/machine.log" 2>&1
[ "$missing" = 0 ] && note "libraries: every dynamic dependency of the built binaries is present"

progress "2/3 the GPU tests (logs: $logs/gpu-tests.log)"
# --- 2. the GPU tests -------------------------------------------------------------------------------
probe=$(IRIS_BACKEND=$IRIS_TEST_BACKEND "$build/tests/gpu/iris_gpu_tests" --probe ptx 2>&1)
probe_status=$?
note "$probe"
[ "$probe_status" = 0 ] || note "FAILED: the $IRIS_TEST_BACKEND backend cannot run the GPU tests here (see above)"

status=0
run_ctest() {  # <phase name> <log file> <ctest arguments...>
  local name=$1 log=$2
  shift 2
  local started=$SECONDS
  "$ctest" --test-dir "$build" --output-on-failure "$@" >"$log" 2>&1
  local result=$?
  [ "$result" = 0 ] || status=1
  note "$name ($((SECONDS - started)) s): $(grep -E '^[0-9]+% tests passed' "$log" || echo "ctest did not finish (exit $result)")"
  grep -E '^\s+[0-9]+ - .* \((Failed|Timeout|Not Run|Exception|SEGFAULT|Child aborted|Subprocess aborted)\)' "$log" |
    sed 's/^\s*/  failed: /' >>"$summary"
  grep -E '^\s+[0-9]+ - .* \(Skipped\)' "$log" | sed 's/^\s*/  skipped: /' >>"$summary"
}

run_ctest "GPU tests (ctest -L gpu, IRIS_TEST_BACKEND=$IRIS_TEST_BACKEND)" "$logs/gpu-tests.log" -L gpu -V
# What the device tests printed about placement, heap setup, bandwidth, launch timing and faults,
# each line prefixed with its test.
awk '/^ *Start +[0-9]+: / { id = $2; sub(":", "", id); name[id] = $3 }
     /^[0-9]+: \[gpu test\]/ { id = $1; sub(":", "", id); line = $0; sub(/^[0-9]+: \[gpu test\] /, "", line);
                               print "  " name[id] ": " line }' "$logs/gpu-tests.log" |
  grep -E "uses GPU|heap setup|copy_device of|raw empty launches|the fault reads" >>"$summary"

progress "3/3 the rest of the suite (logs: $logs/suite.log)"
# --- 3. the rest of the suite on this backend ---------------------------------------------------------
# Without MPS (under it, one test's deliberate device fault would end every process on the GPU), and
# without the shared-GPU warning, which would come first on the stderr of every multi-rank test.
export IRIS_SHARED_GPU_WARNING=0
# Time-sliced (no MPS), with -j jobs at once, a rank's kernel can wait seconds for its peer's to get the
# GPU: a lab check's 5 s bound on a collective ran out once on an H200 (labs/seed). Tests that are about
# the bound set their own IRIS_WAIT_TIMEOUT, which wins over this one.
export IRIS_WAIT_TIMEOUT=${IRIS_WAIT_TIMEOUT:-30}
# IRIS_CTEST_EXCLUDE: more labels to leave out (e.g. fault_injection, to run in a device call of its own).
exclude="gpu${IRIS_CTEST_EXCLUDE:+|$IRIS_CTEST_EXCLUDE}"
run_ctest "rest of the suite (ctest -LE '$exclude' -j$jobs, IRIS_TEST_BACKEND=$IRIS_TEST_BACKEND)" "$logs/suite.log" -LE "$exclude" -j"$jobs"

note "logs: $logs (machine.log, gpu-tests.log, suite.log, summary.txt)"
[ "$status" = 0 ] && [ "$missing" = 0 ] && [ "$probe_status" = 0 ] && note "RESULT: PASSED" || note "RESULT: FAILED"
echo "================ summary ================"
cat "$summary"
[ "$status" = 0 ] && [ "$missing" = 0 ] && [ "$probe_status" = 0 ]
