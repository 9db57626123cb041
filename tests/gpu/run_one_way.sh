#!/bin/bash
# The one-way collectives on a GPU machine, from a build carried there (tests/gpu/pack_build.sh), in one
# call: their tests on cuda, where a small call's time goes (docs/experiments/ccl_fixed_cost.lua: at one
# rank under Nsight Compute, then at every rank count asked), and ccl_bench against NCCL over the sizes
# where the one-way variants compete. Logs and CSVs go to $OUT (or <build>/gpu-logs).
#   tests/gpu/run_one_way.sh <build-dir> [rank counts, default "2"] [--max SIZE] [--tests all|one_way|none]
#   e.g. tests/gpu/run_one_way.sh .carry/build "2 4" --max 4MiB --tests one_way
set -u
. "$(dirname "$0")/gpu_env.sh"
counts=${2:-2}
shift $(($# > 2 ? 2 : $#))
max=4MiB tests=all
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    *) echo "run_one_way.sh: unknown option $1"; exit 2 ;;
  esac
done
log=$logs/one_way.log
export IRIS_BACKEND=cuda IRIS_SHARED_GPU_WARNING=0
cd "$root"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
nvidia-smi -L | tee -a "$log"

step "compile the collectives (NVRTC, or the carried cache)" 600 "$iris" tests/cli/fixtures/ccl_compile.lua
if command -v ncu >/dev/null; then
  for kernel in ccl_ll_all_reduce ccl_all_reduce; do
    step "one rank under ncu: $kernel's own time" 240 ncu --metrics \
      gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__cycles_elapsed.max \
      -k regex:"^$kernel\$" --launch-skip 20 --launch-count 3 "$iris" docs/experiments/ccl_fixed_cost.lua 4096 40
    # every metric of one launch (stall reasons, instructions), as CSV for reading elsewhere
    [ -n "${NCU_RAW:-}" ] && step "one rank under ncu, every metric: $kernel" 300 ncu --set full --page raw --csv \
      --log-file "$logs/ncu_raw_$kernel.csv" -k regex:"^$kernel\$" --launch-skip 20 --launch-count 1 "$iris" \
      docs/experiments/ccl_fixed_cost.lua 4096 40
  done
  step "the host's share of a call, 1 rank" 120 "$iris" -jv="$logs/jit_host_cost.txt" docs/experiments/ccl_host_cost.lua 4096 20000
fi
step "fixed cost at 1 rank" 120 "$iris" docs/experiments/ccl_fixed_cost.lua 4096 2000
for ranks in $counts; do
  [ "$ranks" -gt "$gpus" ] && { echo "=== skip $ranks ranks: $gpus GPU(s)" | tee -a "$log"; continue; }
  mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")
  if [ "$tests" != none ]; then
    files=(tests/lua/ccl_*.lua)
    [ "$tests" = one_way ] && files=(tests/lua/ccl_one_way.lua)
    for file in "${files[@]}"; do
      step "$(basename "$file") at $ranks ranks" 300 "${mpi[@]}" "$iris" test "$file"
    done
    ccl_mismatch_steps "${mpi[@]}"
  fi
  for bytes in ${FIXED_COST_SIZES:-4096 65536 262144}; do
    step "fixed cost at $ranks ranks, $bytes bytes" 120 "${mpi[@]}" "$iris" docs/experiments/ccl_fixed_cost.lua "$bytes" 1000
  done
  [ -n "${NO_BENCH:-}" ] && continue
  step "ccl_bench all_reduce at $ranks ranks" 400 "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --collective all_reduce \
    --variant auto,ll,ll_two_shot,one_shot,two_shot --max "$max" --repeats 3 --csv "$logs/one_way_all_reduce_np$ranks.csv"
  step "ccl_bench the others at $ranks ranks" 400 "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua \
    --collective all_gather,reduce_scatter,all_to_all,broadcast --variant auto,ll,persistent,two_shot,push --max "$max" \
    --repeats 3 --csv "$logs/one_way_others_np$ranks.csv"
done
