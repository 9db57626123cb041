#!/bin/bash
# ctx.ccl.reduce, gather, scatter, send and recv (issue 24, item 5) on a GPU machine, from a build carried
# there (tests/gpu/pack_build.sh) with its kernel cache: their tests on cuda, their mismatches (an error
# naming both ranks, never a hang), and scripts/bench/ccl_rooted_bench.lua's `auto` against NCCL in the same run (ncclReduce,
# ncclBroadcast, ncclSend/ncclRecv in a ring, gather and scatter as nccl-tests' sends and receives), one
# short table per collective; broadcast also as scatter_all_gather (item 4: auto's choice from 4 ranks)
# and copy_engine; then ccl_bench's all_gather and all_to_all, auto and copy_engine, 1 to 256 MiB.
# Logs and CSVs go to $OUT (or <build>/gpu-logs).
#   tests/gpu/run_ccl_rooted.sh <build-dir> [ranks, default 2] [--max SIZE, default 16MiB] [--no-tests]
set -u
. "$(dirname "$0")/gpu_env.sh"
ranks=${2:-2}
shift $(($# > 2 ? 2 : $#))
max=16MiB tests=1
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --no-tests) tests=; shift ;;
    *) echo "run_ccl_rooted.sh: unknown option $1"; exit 2 ;;
  esac
done
log=$logs/ccl_rooted.log
export IRIS_BACKEND=cuda IRIS_SHARED_GPU_WARNING=0
cd "$root"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
nvidia-smi -L | tee -a "$log"
[ "$ranks" -gt "$gpus" ] && { echo "=== $ranks ranks need $ranks GPUs; this machine has $gpus" | tee -a "$log"; exit 2; }
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")

step "compile the collectives (NVRTC, or the carried cache)" 600 "$iris" tests/cli/fixtures/ccl_compile.lua
if [ -n "$tests" ]; then
  for file in tests/lua/ccl_rooted.lua tests/lua/ccl_p2p.lua tests/lua/ccl_device.lua tests/lua/ccl_copy_engine.lua; do
    step "$(basename "$file") at $ranks ranks" 300 "${mpi[@]}" "$iris" test "$file"
  done
  for case in root rooted send_recv recv_absent copy_engine; do
    step "mismatch: $case (an error naming both sides, exit 1)" 60 env IRIS_WAIT_TIMEOUT=2 "${mpi[@]}" "$iris" \
      tests/cli/fixtures/ccl_mismatch.lua "$case"
  done
fi
step "ccl_rooted_bench: reduce, broadcast, send/recv, gather, scatter against NCCL at $ranks ranks" 400 \
  "${mpi[@]}" "$iris" scripts/bench/ccl_rooted_bench.lua --variant auto,scatter_all_gather,copy_engine --max "$max" \
  --repeats 3 --csv "$logs/ccl_rooted_np$ranks.csv"
step "ccl_bench: all_gather and all_to_all, auto and copy_engine, against NCCL at $ranks ranks" 400 \
  "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --collective all_gather,all_to_all --variant auto,copy_engine \
  --min 1MiB --max 256MiB --no-graph --repeats 3 --csv "$logs/ccl_copy_engine_np$ranks.csv"
echo "=== summary"
grep -E "^(FAIL|SKIP)|passed, .* failed|^=== (exit|mismatch)|ctx.ccl.* (rank [0-9]+ called|rank [0-9]+ sent|on rank [0-9]+: rank)|^ccl_rooted_bench on|^collective|^(reduce|broadcast|send_recv|gather|scatter) |^(all_gather|all_to_all) |^ +[0-9.]+ [KMG]iB +(auto|copy_engine)" \
  "$log" | tee "$logs/ccl_rooted_summary.txt"
