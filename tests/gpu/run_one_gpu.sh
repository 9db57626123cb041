#!/bin/bash
# Several ranks on one GPU (issue 12, docs/backends.md "One GPU, many ranks"), on a one-GPU machine, from
# a build carried there (tests/gpu/pack_build.sh):
#   1. without MPS: rank 0 warns once that the ranks share the GPU and how to start MPS (not with
#      IRIS_SHARED_GPU_WARNING=0); the message-passing pattern either finishes or says where every rank
#      is (a hang report after 10 s, or the bounded wait's error), never a silent stall;
#   2. with MPS started: no warning; the pattern scripts at 2 and 4 ranks (tests/gpu/run_patterns.sh);
#   3. MPS stopped again.
# Everything goes to $OUT (or <build>/gpu-logs); a summary comes last.
#   tests/gpu/run_one_gpu.sh <build-dir>
set -u
. "$(dirname "$0")/gpu_env.sh"
export IRIS_BACKEND=cuda
unset IRIS_SHARED_GPU_WARNING  # the warning is what part 1 checks
log=$logs/one-gpu.log
: >"$log"
cd "$root"
summary=()
status=0
check() {  # <what> <0 when it holds>
  if [ "$2" = 0 ]; then summary+=("ok      $1"); else summary+=("FAILED  $1"); status=1; fi
}

nvidia-smi -L | tee -a "$log"
echo "=== 1. without MPS" | tee -a "$log"
out=$(timeout 120 mpirun --oversubscribe -np 2 "$iris" -e 'iris.init{}' 2>&1)
echo "$out" | tee -a "$log"
[ "$(echo "$out" | grep -c 'share GPU .*CUDA MPS is not running')" = 1 ]
check "2 ranks, no MPS: the warning, once" $?
echo "$out" | grep -q 'nvidia-cuda-mps-control -d'
check "the warning says how to start MPS" $?
echo "$out" | grep -q 'IRIS_SHARED_GPU_WARNING=0'
check "the warning says how to silence it" $?
out=$(IRIS_SHARED_GPU_WARNING=0 timeout 120 mpirun --oversubscribe -np 2 "$iris" -e 'iris.init{}' 2>&1)
echo "$out" | tee -a "$log"
! echo "$out" | grep -q 'share GPU'
check "2 ranks, no MPS, IRIS_SHARED_GPU_WARNING=0: no warning" $?
started=$SECONDS
# Time-sliced, a round trip waits for the other rank's time slice: the default 1000 rounds x 12 runs took
# about 100 s on an H200 (measured), so fewer rounds, to finish within the limit.
out=$(IRIS_HANG_REPORT=10 IRIS_HANG_TIMEOUT=40 timeout 90 mpirun --oversubscribe -np 2 "$iris" scripts/06_message_passing.lua --rounds 100 --iters 3 2>&1)
code=$?
echo "$out" | tee -a "$log"
echo "=== exit $code after $((SECONDS - started)) s" | tee -a "$log"
[ "$code" = 0 ] || echo "$out" | grep -qE 'hang report|gave up after'
check "06_message_passing without MPS: finishes, or says where every rank is (exit $code, $((SECONDS - started)) s)" $?

echo "=== 2. with MPS" | tee -a "$log"
mps_start "2 and 4 ranks on one GPU"
out=$(timeout 120 mpirun --oversubscribe -np 2 "$iris" -e 'iris.init{}' 2>&1)
echo "$out" | tee -a "$log"
! echo "$out" | grep -q 'share GPU'
check "2 ranks under MPS: no warning" $?
for ranks in 2 4; do
  "$root/tests/gpu/run_patterns.sh" "$build" cuda "$ranks" >>"$log" 2>&1
  check "the pattern scripts at $ranks ranks under MPS (tests/gpu/run_patterns.sh)" $?
  tail -12 "$logs/patterns$([ $ranks = 2 ] || echo -np$ranks).log" | tee -a "$log"
done

echo "=== 3. MPS stopped" | tee -a "$log"
mps_stop
{
  echo "================ one GPU, many ranks: summary (log: $log) ================"
  printf '%s\n' "${summary[@]}"
  [ "$status" = 0 ] && echo "RESULT: PASSED" || echo "RESULT: FAILED"
} | tee -a "$log"
exit "$status"
