#!/bin/bash
# ccl_bench on a GPU machine, from a build carried there (tests/gpu/pack_build.sh), in one call of at
# most ~8 minutes: per size ctx.ccl and NCCL eager and both replayed in a CUDA graph (NCCL captured on
# iris's stream), every call checked inside the timed batches; then --stress (10,000 mixed collectives,
# every one checked), and one run whose result is spoiled on purpose, which must fail. Logs and CSVs
# go to $OUT (or <build>/gpu-logs).
#   [MAX=SIZE (default 4MiB)] [STRESS=N (default 10000)] tests/gpu/run_ccl_bench.sh <build-dir> [ranks, default 2]
#   e.g. MAX=64MiB tests/gpu/run_ccl_bench.sh .carry/build 2
set -u
. "$(dirname "$0")/gpu_env.sh"
ranks=${2:-2}
max=${MAX:-4MiB} stress=${STRESS:-10000}
log=$logs/ccl_bench.log
export IRIS_BACKEND=cuda IRIS_SHARED_GPU_WARNING=0
cd "$root"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
nvidia-smi -L | tee -a "$log"
[ "$ranks" -gt "$gpus" ] && mps_start "$ranks ranks on $gpus GPU(s)"
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")

step "compile the collectives (NVRTC, or the carried cache)" 300 "$iris" tests/cli/fixtures/ccl_compile.lua
step "ccl_bench all_reduce at $ranks ranks, eager and graph, NCCL too" 200 "${mpi[@]}" "$iris" \
  scripts/bench/ccl_bench.lua --collective all_reduce --variant auto,ll,ll_two_shot,two_shot --max "$max" \
  --repeats 3 --csv "$logs/ccl_bench_all_reduce_np$ranks.csv"
step "ccl_bench the others at $ranks ranks, eager and graph, NCCL too" 200 "${mpi[@]}" "$iris" \
  scripts/bench/ccl_bench.lua --collective all_gather,reduce_scatter,all_to_all,broadcast --variant auto \
  --max "$max" --repeats 3 --csv "$logs/ccl_bench_others_np$ranks.csv"
step "ccl_bench --stress $stress at $ranks ranks" 120 "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua \
  --stress "$stress" --csv "$logs/ccl_bench_stress_np$ranks.csv"
step "ccl_bench with a replay skipped on purpose (must exit 1: a wrong result, naming the call)" 60 \
  "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --collective all_reduce --variant ll --max 4KiB --repeats 1 \
  --inject skip_replay
