#!/bin/bash
# The runs of the four- and eight-GPU machines (the issue "Four and eight GPUs") in one device call, from a
# build carried there (tests/gpu/pack_build.sh) and a kernel cache warmed on the development machine
# (IRIS_CACHE_DIR): at `ranks` ranks, one per GPU, the pattern scripts 00-06 with their matrices, every
# lab's reference solution through its checker, every tests/lua/ccl_*.lua and the mismatch fixtures, then
# ccl_bench (auto, eager and replayed in a graph, NCCL in the same run) to MAX. Each part is time-boxed
# so that the whole fits one call (PARTS picks some: "patterns labs ccl bench"). Logs go to $OUT (or
# <build>/gpu-logs): patterns-np<N>.log, lab_calibration.log, many_gpus.log, ccl_bench_np<N>.csv.
# More ranks than GPUs share them under CUDA MPS (correctness only: spinning ranks time-slice).
#   [MAX=64MiB] [PARTS="patterns labs ccl bench"] tests/gpu/run_many_gpus.sh <build-dir> [ranks, default: the GPUs]
set -u
. "$(dirname "$0")/gpu_env.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
ranks=${2:-$gpus}
parts=${PARTS:-patterns labs ccl bench}
max=${MAX:-64MiB}
log=$logs/many_gpus.log
here=$(dirname "$0")
export IRIS_BACKEND=cuda IRIS_SHARED_GPU_WARNING=0
cd "$root"
nvidia-smi -L | tee -a "$log"
[ "$ranks" -gt "$gpus" ] && mps_start "$ranks ranks on $gpus GPU(s)"
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

step "compile the collectives (the carried cache, else NVRTC)" 300 "$iris" tests/cli/fixtures/ccl_compile.lua
has patterns && step "patterns 00-06 at $ranks ranks" 240 "$here/run_patterns.sh" "$build" cuda "$ranks"
has labs && step "every lab's solution at $ranks ranks" 240 "$here/calibrate_labs.sh" "$build" "$ranks"
if has ccl; then
  for file in tests/lua/ccl_*.lua; do
    step "$(basename "$file") at $ranks ranks" 120 "${mpi[@]}" "$iris" test "$file"
  done
  ccl_mismatch_steps "${mpi[@]}"
fi
has bench && step "ccl_bench auto at $ranks ranks to $max, eager and graph, NCCL too" 300 "${mpi[@]}" "$iris" \
  scripts/bench/ccl_bench.lua --variant auto --max "$max" --repeats 3 --csv "$logs/ccl_bench_np$ranks.csv"
grep -E "^=== (exit|.*: )" "$log" | paste - - | awk -F'\t' '{ print $2 "  <- " substr($1, 5, 70) }' | tail -40
