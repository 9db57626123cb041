#!/bin/bash
# Programmatic dependent launch of the one-way kernels (IRIS_EARLY_START, docs/collectives.md "Starting
# early") on a GPU machine, in one call, from a build carried there: first correctness with it on (the
# collectives' tests and graphs at the GPUs' count, and ccl_bench's stress, every result checked), then
# an A/B of the same binary and kernel cache with it off (A, IRIS_EARLY_START=0) and on (B): ccl_bench
# over the small sizes, eager and replayed in a graph, NCCL in the same runs, twice in alternating
# order. Logs and CSVs go to $OUT (or <build>/gpu-logs).
#   [COLLECTIVES=all_reduce,...] [MAX=1MiB] [TESTS=ccl_one_way,...] tests/gpu/run_early_start.sh <build-dir> [ranks, default 2]
set -u
. "$(dirname "$0")/gpu_env.sh"
ranks=${2:-2}
log=$logs/early_start.log
export IRIS_BACKEND=cuda
cd "$root"
mpi=(mpirun --bind-to none -np "$ranks")

nvidia-smi -L | tee -a "$log"
for name in $(echo "${TESTS:-ccl_one_way,ccl_all_reduce,ccl_collectives,ccl_rooted,ccl_graph,graph_capture}" | tr , ' '); do
  step "$name at $ranks ranks, early start on" 300 "${mpi[@]}" "$iris" test "tests/lua/$name.lua"
done
step "stress, early start on" 300 "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --stress 3000
for pass in 1 2; do
  order="0 1"
  [ "$pass" = 2 ] && order="1 0"
  for early in $order; do
    which=A
    [ "$early" = 1 ] && which=B
    step "$which (IRIS_EARLY_START=$early), pass $pass: ccl_bench at $ranks ranks" 300 env IRIS_EARLY_START="$early" \
      "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --collective "${COLLECTIVES:-all_reduce}" --variant auto \
      --max "${MAX:-1MiB}" --repeats 3 --csv "$logs/early_${which}_pass${pass}.csv"
  done
done
