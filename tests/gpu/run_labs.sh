#!/bin/bash
# Every lab's reference solution through its checker on the cuda backend (docs/labs/README.md), at 2
# and 4 ranks (or the rank counts given), then lab 01's untouched skeleton (a failure is its expected
# output). With more ranks than GPUs the ranks share them under CUDA MPS, started here and stopped at
# the end. Its log, $OUT/labs.log (else <build>/gpu-logs/labs.log), is what the README's GPU section shows.
#   tests/gpu/run_labs.sh <build-dir> [ranks...]      e.g. tests/gpu/run_labs.sh .carry/build 2 4
set -u
. "$(dirname "$0")/gpu_env.sh"
shift $(($# > 0 ? 1 : 0))
ranks=${*:-2 4}
log=$logs/labs.log
export IRIS_BACKEND=cuda
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
most=0
for n in $ranks; do [ "$n" -gt "$most" ] && most=$n; done
cd "$root"

{ echo "=== $(date -u '+%Y-%m-%d %H:%M UTC'), $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
  echo "=== $("$iris" --version)"; } | tee "$log"
if [ "$most" -gt "$gpus" ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && echo "=== CUDA MPS started: up to $most ranks on $gpus GPU(s)" | tee -a "$log"
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi

run() {  # <command...>: one check, logged with its exit code and time; never stops the sequence
  echo "=== $*" | tee -a "$log"
  local started=$SECONDS
  timeout 600 "$@" 2>&1 | tee -a "$log"
  echo "=== exit ${PIPESTATUS[0]} after $((SECONDS - started)) s" | tee -a "$log"
}

for dir in labs/[0-9][0-9]-*; do
  lab=$(basename "$dir")
  for n in $ranks; do
    run mpirun --oversubscribe --bind-to none -np "$n" "$iris" lab check "${lab:0:2}" "$dir/solution.lua"
  done
done
run mpirun --oversubscribe --bind-to none -np 2 "$iris" lab check 01 labs/01-heap/skeleton.lua
