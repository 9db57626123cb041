# Sourced by the GPU scripts (run_on_gpu.sh, run_patterns.sh, run_benchmarks.sh, run_one_gpu.sh,
# run_ccl.sh, run_ccl_bench.sh, run_ops.sh, run_labs.sh, run_graphs.sh), which take the build folder as their first
# argument: where things are, the environment every run on a GPU machine needs, and the steps they
# share (step, and CUDA MPS: mps_start, mps_stop). Sets $root (this checkout), $build (the build folder,
# default <root>/build), $logs ($OUT, the device tool's folder, when set, else <build>/gpu-logs) and
# $iris (the binary); the functions log to the script's $log.
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd) ||
  { echo "$(basename "$0"): no build directory ${1:-$root/build}"; exit 2; }
logs=${OUT:-$build/gpu-logs}
mkdir -p "$logs"
iris=$build/bin/iris-lua
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Never NVLink multicast: a program using it can take the host's GPUs out of service for others.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The kernel cache lives in the build folder, not under $OUT: nothing there to bring back.
export IRIS_CACHE_DIR=${IRIS_CACHE_DIR:-$build/kernel-cache}

# The run scripts' sequence of commands, each logged to the script's $log.
step() {  # <title> <seconds> <command...>: runs it with a time limit, logs it, never stops the sequence
  local title=$1 limit=$2
  shift 2
  echo "=== $title: $*" | tee -a "$log"
  local started=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  echo "=== exit ${PIPESTATUS[0]} after $((SECONDS - started)) s" | tee -a "$log"
}

# The collectives' mismatch fixtures: each run must end with exit 1 and an error naming both ranks.
ccl_mismatch_steps() {  # <mpirun and its arguments...>
  local case
  for case in size dtype op collective tensors; do
    step "mismatch: $case at ${*: -1} ranks (must end with an error naming both ranks)" 60 "$@" "$iris" \
      tests/cli/fixtures/ccl_mismatch.lua "$case"
  done
}

# CUDA MPS, for more ranks than GPUs: without it, spinning kernels of different processes only
# time-slice. The scripts use it one at a time (the same folders every time).
mps_start() {  # <what>: starts it, logged ("=== CUDA MPS started: <what>"); it stops when the script exits
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" = 0 ] && echo "=== CUDA MPS started: $1" | tee -a "$log"
  trap mps_stop EXIT
}
mps_stop() {  # stops it now (and not again at the exit)
  trap - EXIT
  echo quit | nvidia-cuda-mps-control 2>&1 | tee -a "$log"
}

# A build made on the development machine names, in its CTest files, the source folder, the build folder
# and the cmake that configured it by the paths they had there. Where those do not exist here, they are
# made links to this checkout, the carried build and this machine's cmake, so that `ctest --test-dir`
# runs; each link made is said on stdout. Needs $root and $build.
resolve_recorded_paths() {
  local cache=$build/CMakeCache.txt
  [ -f "$cache" ] || return 0
  _link_if_missing "$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")" "$root"
  _link_if_missing "$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$cache")" "$build"
  _link_if_missing "$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$cache")" "$(command -v cmake)"
}
_link_if_missing() {  # <path recorded in the build> <where it is here>
  local then=$1 now=$2
  [ -n "$then" ] && [ -n "$now" ] && [ "$then" != "$now" ] && [ ! -e "$then" ] || return 0
  mkdir -p "$(dirname "$then")" && ln -s "$now" "$then" && echo "linked $then -> $now (the build's recorded path)"
}
