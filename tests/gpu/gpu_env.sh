# Sourced by the GPU scripts (run_on_gpu.sh, run_patterns.sh, run_benchmarks.sh, run_one_gpu.sh), which
# take the build folder as their first argument: where things are, and the environment every run on a
# GPU machine needs. Sets $root (this checkout), $build (the build folder, default <root>/build), $logs
# ($OUT, the device tool's folder, when set, else <build>/gpu-logs) and $iris (the binary).
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
