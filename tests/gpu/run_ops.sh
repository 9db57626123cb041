#!/bin/bash
# The fused ops (issue 16, docs/ops.md) on a GPU machine, from a build carried there
# (tests/gpu/pack_build.sh). With more ranks than GPUs the ranks share GPUs under CUDA MPS (started here,
# stopped at the end). Each phase fits one device call (10 minutes); keep the kernel cache between them
# (IRIS_CACHE_DIR outside the carried build, which each call replaces):
#   tests/gpu/run_ops.sh <build-dir> compile_ccl # NVRTC: ctx.ccl's kernels into the cache
#   tests/gpu/run_ops.sh <build-dir> compile_ops # NVRTC: ctx.ops's kernels into the cache
#   tests/gpu/run_ops.sh <build-dir> test        # gemm_device, ops_fused, the mismatches
#   tests/gpu/run_ops.sh <build-dir> validate    # examples 07-16 at 1024 x 2048 x 4096, validated
#   tests/gpu/run_ops.sh <build-dir> bench [ops_bench options]   # ops_bench, CSV included
#   tests/gpu/run_ops.sh <build-dir> examples    # examples 07-16 at Iris's sizes (8192 x 4608 x 36864)
# Ranks: $RANKS, default the GPUs, at least 2. Logs and CSVs go to $OUT (or <build>/gpu-logs).
set -u
phase=${2:-test}
. "$(dirname "$0")/gpu_env.sh"
export IRIS_BACKEND=cuda
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
ranks=${RANKS:-$((gpus > 2 ? gpus : 2))}
log=$logs/ops-$phase.log
cd "$root"

if [ "$ranks" -gt "$gpus" ] && [ "${phase#compile}" = "$phase" ]; then
  mps_start "$ranks ranks on $gpus GPU(s)"
fi
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")
examples="07_gemm_all_scatter 08_gemm_atomics_all_reduce 09_gemm_one_shot_all_reduce
  10_gemm_all_scatter_wg_specialization 11_gemm_all_scatter_producer_consumer 12_gemm_all_scatter_bulk_synchronous
  14_all_gather_gemm 15_gemm_all_reduce_ring_based 16_all_reduce_ring_based"

case $phase in
compile_ccl) step "compile the collectives (NVRTC)" 560 "$iris" tests/cli/fixtures/ccl_compile.lua ;;
compile_ops) step "compile the fused ops (NVRTC)" 560 "$iris" tests/cli/fixtures/ops_compile.lua ;;
test)
  step "gemm_device at 1 rank" 120 "$iris" test tests/lua/gemm_device.lua
  step "ops_fused at 1 rank" 100 "$iris" test tests/lua/ops_fused.lua
  step "ops_fused at $ranks ranks" 150 "${mpi[@]}" "$iris" test tests/lua/ops_fused.lua
  for case in size variant collective; do
    step "mismatch: $case (must end with an error naming both ranks)" 40 "${mpi[@]}" "$iris" \
      tests/cli/fixtures/ops_mismatch.lua "$case"
  done
  ;;
validate)
  for example in $examples; do
    k=(--k 4096)
    [ "$example" = 16_all_reduce_ring_based ] && k=()  # no GEMM, no K
    step "$example, mid-size, validated" 55 "${mpi[@]}" "$iris" scripts/$example.lua --m 1024 --n 2048 "${k[@]}" \
      --iters 3 --warmup 1
  done
  ;;
bench)
  step "ops_bench at $ranks ranks" 540 "${mpi[@]}" "$iris" scripts/bench/ops_bench.lua --csv "$logs/ops_bench.csv" \
    "${@:3}"
  ;;
examples)
  for example in $examples; do
    step "$example at Iris's sizes" 55 "${mpi[@]}" "$iris" scripts/$example.lua --no-validate \
      --csv "$logs/$example.csv"
  done
  ;;
*) echo "run_ops.sh: the phase is compile_ccl, compile_ops, test, validate, bench or examples, got '$phase'"; exit 2 ;;
esac
echo "=== summary (exit codes)"; grep '^=== exit' "$log" | sort | uniq -c
