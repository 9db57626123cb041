#!/bin/bash
# An A/B of a small collective's cost on a GPU machine, in one call: two iris-lua binaries (say main's
# and a change's, each a stripped bin/iris-lua carried under .carry/), the same scripts of this checkout,
# the same kernel cache (IRIS_CACHE_DIR; each binary's kernels have their own keys). For each binary:
# docs/experiments/ccl_host_cost.lua (the host's share of a call: repeated, and on new tensors) and
# docs/experiments/ccl_fixed_cost.lua at one rank, the one-way kernel's own time under Nsight Compute,
# ccl_fixed_cost at `ranks` for a few sizes, and ccl_bench's all_reduce (eager and in a graph, NCCL in
# the same run) over the small sizes. Logs go to $OUT (or /tmp/fixed-cost-ab). More ranks than GPUs
# share them under CUDA MPS: then the host's figures (issue us) hold, the device's do not.
#   [NCU=0] [COLLECTIVES=all_reduce,broadcast] tests/gpu/run_fixed_cost_ab.sh <binary A> <binary B> [ranks, default 2] [max size, default 1MiB]
#   e.g. tests/gpu/run_fixed_cost_ab.sh .carry/ab/base/iris-lua .carry/ab/new/iris-lua 2
set -u
a=$1 b=$2 ranks=${3:-2} max=${4:-1MiB}
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=${OUT:-/tmp/fixed-cost-ab}
mkdir -p "$logs"
log=$logs/fixed_cost_ab.log
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 IRIS_BACKEND=cuda
export IRIS_SHARED_GPU_WARNING=0
cd "$root"
step() {  # <title> <seconds> <command...>
  local title=$1 limit=$2
  shift 2
  echo "=== $title: $*" | tee -a "$log"
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  echo "=== exit ${PIPESTATUS[0]}" | tee -a "$log"
}
nvidia-smi -L | tee -a "$log"
if [ "$ranks" -gt "$(nvidia-smi -L | wc -l)" ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && echo "=== CUDA MPS started: $ranks ranks" | tee -a "$log"
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")
for which in A B; do
  bin=$a
  [ "$which" = B ] && bin=$b
  step "$which: host cost at 1 rank ($bin)" 120 "$bin" docs/experiments/ccl_host_cost.lua 4096 20000
  step "$which: fixed cost at 1 rank ($bin)" 180 "$bin" docs/experiments/ccl_fixed_cost.lua 4096 2000
  if [ "${NCU:-1}" = 1 ] && command -v ncu >/dev/null; then
    step "$which: the one-way kernels' own time at 1 rank under ncu" 240 ncu --metrics \
      gpu__time_duration.sum,launch__registers_per_thread,launch__stack_size,smsp__inst_executed.sum \
      -k regex:"^ccl_ll_all_reduce" --launch-skip 20 --launch-count 2 "$bin" docs/experiments/ccl_fixed_cost.lua 4096 40
  fi
  for bytes in 4096 65536; do
    step "$which: fixed cost at $ranks ranks, $bytes bytes" 120 "${mpi[@]}" "$bin" docs/experiments/ccl_fixed_cost.lua \
      "$bytes" 1000
  done
  step "$which: ccl_bench all_reduce at $ranks ranks" 240 "${mpi[@]}" "$bin" scripts/bench/ccl_bench.lua \
    --collective "${COLLECTIVES:-all_reduce}" --variant auto,ll --max "$max" --repeats 3 --csv "$logs/ab_${which}_np$ranks.csv"
done
