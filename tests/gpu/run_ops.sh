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
#   tests/gpu/run_ops.sh <build-dir> hopper [ops_bench options]   # one call of at most $BUDGET s (480):
#       the whole-kernel GEMM on Hopper in ctx.ops (issue 25): ops_fused at $ranks ranks, ops_bench
#       (columns $VARIANTS, default auto, bulk, fused, vendor; and cuBLAS then NCCL written apart; every result
#       validated on the device), then
#       ops_fused at 1 rank, ops_graph (overlap's two streams in a CUDA graph), gemm_device and the mismatches
#       while time is left. Kernels from a cache warmed here:
#         IRIS_CACHE_DIR=.carry/kcache IRIS_CROSS_COMPILE=cuda:sm_90a build/bin/iris-lua tests/cli/fixtures/ops_compile.lua
#       (and ccl_compile.lua; docs/testing.md), then there IRIS_CACHE_DIR=.carry/kcache tests/gpu/run_ops.sh .carry/build hopper
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
  for case in size variant collective bulk; do
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
hopper)
  budget=${BUDGET:-480}
  nvidia-smi -L | tee -a "$log"
  timed_step() {  # <title> <seconds> <command...>: step, its limit cut to what is left of $budget
    local left=$((budget - SECONDS)) limit=$2 title=$1
    shift 2
    [ "$left" -lt 15 ] && { echo "=== skip $title: the call's $budget s are spent" | tee -a "$log"; return; }
    step "$title" $((limit < left ? limit : left)) "$@"
  }
  timed_step "the fused ops' kernels (the carried cache, else NVRTC)" 150 "$iris" tests/cli/fixtures/ops_compile.lua
  timed_step "the collectives' kernels (the carried cache, else NVRTC)" 150 "$iris" tests/cli/fixtures/ccl_compile.lua
  timed_step "ops_fused at $ranks ranks" 120 "${mpi[@]}" "$iris" test tests/lua/ops_fused.lua
  timed_step "ops_bench at $ranks ranks, validated" 300 "${mpi[@]}" "$iris" scripts/bench/ops_bench.lua --validate \
    --variants ${VARIANTS:-auto,bulk,fused,vendor} --iters 5 --warmup 2 --csv "$logs/ops_bench_hopper.csv" "${@:3}"
  timed_step "ops_fused at 1 rank" 60 "$iris" test tests/lua/ops_fused.lua
  timed_step "ops_graph at $ranks ranks (overlap's two streams and vendor's NCCL inside a capture)" 60 "${mpi[@]}" "$iris" test \
    tests/lua/ops_graph.lua
  timed_step "gemm_device at 1 rank" 60 "$iris" test tests/lua/gemm_device.lua
  export IRIS_WAIT_TIMEOUT=3 # (vendor_variant: the fused kernel's wait for the rank in the vendor's gives up)
  for case in bulk variant vendor vendor_variant; do
    timed_step "mismatch: $case (must end with an error naming both ranks)" 30 "${mpi[@]}" "$iris" \
      tests/cli/fixtures/ops_mismatch.lua "$case"
  done
  unset IRIS_WAIT_TIMEOUT
  ;;
examples)
  for example in $examples; do
    step "$example at Iris's sizes" 55 "${mpi[@]}" "$iris" scripts/$example.lua --no-validate \
      --csv "$logs/$example.csv"
  done
  ;;
*) echo "run_ops.sh: the phase is compile_ccl, compile_ops, test, validate, bench, examples or hopper, got '$phase'"; exit 2 ;;
esac
echo "=== summary (exit codes)"; grep '^=== exit' "$log" | sort | uniq -c
