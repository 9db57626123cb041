#!/bin/bash
# The pattern scripts (scripts/0*.lua, docs/patterns.md) at 2 ranks (or [ranks]) on a GPU machine, with their GPU
# defaults (1 GiB buffers, 256 MiB of atomic counters: far beyond the 50 MB L2), for docs/perf.md.
# From a build carried there (tests/gpu/pack_build.sh). Each step is time-limited; everything goes to
# $OUT/patterns.log (or <build>/gpu-logs) and the terminal; a summary comes last. About a minute on
# two H200s; at most 8 x 50 s + 2 x 30 s even if every step ran into its limit.
#   tests/gpu/run_patterns.sh <build-dir> [backend, default cuda] [ranks, default 2]
set -u
. "$(dirname "$0")/gpu_env.sh"
backend=${2:-cuda}
export IRIS_BACKEND=$backend
ranks=${3:-2}
log=$logs/patterns.log
[ "$ranks" = 2 ] || log=$logs/patterns-np$ranks.log
: >"$log"
cd "$root"

summary=()
status=0
step() {  # <title> <seconds> <command...>: runs it with a time limit, logs it, never stops the sequence
  local title=$1 limit=$2
  shift 2
  echo "=== $title: $*" | tee -a "$log"
  local started=$SECONDS output
  output=$(timeout "$limit" "$@" 2>&1)
  local result=$?
  echo "$output" | tee -a "$log"
  echo "=== exit $result after $((SECONDS - started)) s" | tee -a "$log"
  local verdict
  verdict=$(echo "$output" | grep -E "^(validated|not validated)" | tail -1)
  if [ "$result" = 124 ]; then verdict="TIMED OUT after $limit s"; fi
  if [ "$result" != 0 ]; then
    status=1
    [ "$result" = 124 ] || verdict="FAILED: $(echo "$output" | grep -m1 "iris-lua\[rank" || echo "$output" | tail -1)"
  fi
  summary+=("$(printf '%-28s exit %3d %4d s  %s' "$title" "$result" "$((SECONDS - started))" "$verdict")")
}

for script in 00_load 01_store 02_all_load 03_all_store 04_atomic_add 05_atomic_xchg 06_message_passing; do
  step "$script" 50 mpirun --oversubscribe -np "$ranks" "$iris" "scripts/$script.lua"
done
# Element by element (ctx.load / ctx.store of 4-byte floats) against the block copies above.
step "00_load --method element" 30 mpirun --oversubscribe -np "$ranks" "$iris" scripts/00_load.lua --method element
step "01_store --method element" 30 mpirun --oversubscribe -np "$ranks" "$iris" scripts/01_store.lua --method element

{
  echo "================ patterns: summary ($backend, $ranks ranks; log: $log) ================"
  printf '%s\n' "${summary[@]}"
  [ "$status" = 0 ] && echo "RESULT: PASSED" || echo "RESULT: FAILED"
} | tee -a "$log"
exit "$status"
