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
  mps_start "up to $most ranks on $gpus GPU(s)"
fi

for dir in labs/[0-9][0-9]-*; do
  lab=$(basename "$dir")
  for n in $ranks; do
    step "lab ${lab:0:2}'s solution at $n ranks" 600 mpirun --oversubscribe --bind-to none -np "$n" "$iris" lab check \
      "${lab:0:2}" "$dir/solution.lua"
  done
done
step "lab 01's skeleton at 2 ranks (it must fail)" 600 mpirun --oversubscribe --bind-to none -np 2 "$iris" lab check 01 \
  labs/01-heap/skeleton.lua
