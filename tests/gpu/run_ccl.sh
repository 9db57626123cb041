#!/bin/bash
# The collectives on a GPU machine, from a build carried there (tests/gpu/pack_build.sh): their tests
# (tests/lua/ccl_*.lua and the mismatch fixtures) on the cuda backend, then scripts/bench/ccl_bench.lua
# against NCCL, CSV included. With more ranks than GPUs the ranks share GPUs under CUDA MPS (started
# here and stopped at the end): without it, spinning kernels of different processes only time-slice.
# Logs and the CSV go to $OUT (or <build>/gpu-logs).
#   tests/gpu/run_ccl.sh <build-dir> [ranks, default: the GPUs, at least 2] [bench options...]
#   e.g. tests/gpu/run_ccl.sh .carry/build 2 --max 256MiB
set -u
. "$(dirname "$0")/gpu_env.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
ranks=${2:-$((gpus > 2 ? gpus : 2))}
shift $(($# > 2 ? 2 : $#))
log=$logs/ccl.log
export IRIS_BACKEND=cuda
cd "$root"

if [ "$ranks" -gt "$gpus" ]; then
  mps_start "$ranks ranks on $gpus GPU(s)"
fi
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")

step "compile the collectives (NVRTC)" 600 "$iris" tests/cli/fixtures/ccl_compile.lua
for file in tests/lua/ccl_*.lua; do
  step "$(basename "$file") at 1 rank" 300 "$iris" test "$file"
  step "$(basename "$file") at $ranks ranks" 300 "${mpi[@]}" "$iris" test "$file"
done
ccl_mismatch_steps "${mpi[@]}"
step "ccl_bench at $ranks ranks" 900 "${mpi[@]}" "$iris" scripts/bench/ccl_bench.lua --csv "$logs/ccl_bench.csv" "$@"
step "auto choices at debug level" 60 env IRIS_LOG_LEVEL=debug "${mpi[@]}" "$iris" -e \
  'local ctx = iris.init{} for _, n in ipairs{1024, 65536, 16777216} do local t = ctx:zeros(n) ctx.ccl.all_reduce(t, t) end'
