#!/bin/bash
# Fault injection: runs iris-lua jobs and sends one rank a signal at a random moment of a chosen phase,
# then checks that the job ends within 10 s with the exit code the signal explains, that no process of
# the job is left, that nothing of it stays in /dev/shm and that the kernel cache's tmp/ is empty.
#
#   inject.sh IRIS_LUA RANKS CASES SCENARIO...
#
# Scenarios are scenarios/<name>.lua (run as a script) or scenarios/<name>.repl (typed into the REPL on
# standard input); scenarios/<name>.window gives the seconds after the phase starts within which the
# signal falls (default 1). Cases take the scenarios in turn and the signals SIGKILL, SIGTERM, SIGINT in
# turn, each at a random moment of its window, to a random rank. IRIS_FI_SEED repeats a run. Before the
# cases, each Lua scenario runs once without a signal up to its phase (IRIS_FI_WARMUP), so the kernels
# it compiles before the phase are in the cache and every case reaches its phase in seconds.
# Prints one line per case and the counts; exits 1 if any case failed.
set -u
iris=$1 np=$2 cases=$3
shift 3
scenarios=("$@")
here=$(cd "$(dirname "$0")" && pwd)
seed=${IRIS_FI_SEED:-$$}
RANDOM=$seed
work=$(mktemp -d "${TMPDIR:-/tmp}/iris-fault-injection.XXXXXX")
cache=$work/cache  # its own: tmp/ must hold nothing of another job
export IRIS_CACHE_DIR=$cache IRIS_BACKEND=${IRIS_BACKEND:-cpu} IRIS_FI_SCENARIOS=$here/scenarios
# Cross-compiling for the GPUs (the suite's IRIS_CROSS_COMPILE) is checked elsewhere; here it would
# only make the warm-up compile ctx.ccl's kernels with NVRTC and hiprtc for minutes.
unset IRIS_CROSS_COMPILE
# A rank that survives its signal (Ctrl-C in the REPL stops only its own chunk) may leave the others
# waiting in a collective: the hang timeout ends a wait on the host, the bounded wait one on the device
# (ctx.ccl, ctx:device_barrier), both well within the 10 s a case allows.
export IRIS_HANG_REPORT=${IRIS_HANG_REPORT:-2} IRIS_HANG_TIMEOUT=${IRIS_HANG_TIMEOUT:-4}
export IRIS_WAIT_TIMEOUT=${IRIS_WAIT_TIMEOUT:-4}
mpirun=(${IRIS_MPIRUN:-mpirun --oversubscribe --bind-to none})
signals=(KILL TERM INT)
declare -A sent=() hit=()
failures=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# Whether fewer than $2 seconds passed since $1.
within() { awk -v a="$1" -v b="$(now)" -v s="$2" 'BEGIN { exit !(b - a < s) }'; }

# Processes whose environment carries this case's tag: the ranks, and anything they started.
tagged() { grep -l -s -a "IRIS_FI_CASE=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }

# What exit status mpirun may give when one rank got signal $1 (128 + n when the rank died of it; 1 when
# iris-lua turned Ctrl-C into "interrupted!" and ended the job).
allowed_codes() {
  case $1 in
    KILL) echo "137" ;;
    TERM) echo "143" ;;
    INT) echo "1 130" ;;
  esac
}

fail() {
  echo "  FAILED: $*"
  failures=$((failures + 1))
}

run_case() {
  local c=$1 scenario=$2 sig=$3 victim=$4
  local dir=$work/case$c tag="$$-$c" file window input
  mkdir -p "$dir"
  window=1
  [ -f "$here/scenarios/$scenario.window" ] && window=$(cat "$here/scenarios/$scenario.window")
  local delay
  delay=$(awk -v r=$RANDOM -v w="$window" 'BEGIN { printf "%.3f", r / 32768 * w }')
  if [ -f "$here/scenarios/$scenario.repl" ]; then
    file=()
    input=$dir/input
    mkfifo "$input"
  else
    file=("$here/scenarios/$scenario.lua")
    input=/dev/null
  fi
  IRIS_FI_DIR=$dir IRIS_FI_CASE=$tag setsid "${mpirun[@]}" -np "$np" "$iris" "${file[@]}" <"$input" >"$dir/out" 2>&1 &
  local job=$!
  if [ -p "$input" ]; then
    exec 7>"$input"  # keeps the REPL's input open until the case is over
    cat "$here/scenarios/$scenario.repl" >&7
  fi
  local started deadline ready
  started=$(now)
  for ((;;)); do
    ready=$(ls "$dir" | grep -c '^ready\.')
    [ "$ready" -ge "$np" ] && break
    if ! kill -0 $job 2>/dev/null || ! within "$started" 60; then
      fail "case $c ($scenario): the job did not reach the phase (ready on $ready of $np ranks)"
      sed 's/^/    /' "$dir/out" | tail -20
      kill -KILL -- -$job 2>/dev/null
      wait $job 2>/dev/null
      [ -p "$input" ] && exec 7>&-
      return
    fi
    sleep 0.02
  done
  sleep "$delay"
  local pids victim_pid
  pids=$(for f in "$dir"/pid.*; do cat "$f"; echo; done)
  victim_pid=$(cat "$dir/pid.$victim")
  kill -"$sig" "$victim_pid" 2>/dev/null
  local signalled
  signalled=$(now)
  [ -p "$input" ] && exec 7>&-  # the REPL's input ends: a session that survives the signal ends too
  while kill -0 $job 2>/dev/null && within "$signalled" 10; do sleep 0.05; done
  local took
  took=$(elapsed "$signalled")
  local summary="case $c: $scenario, SIG$sig to rank $victim after ${delay} s"
  if kill -0 $job 2>/dev/null; then
    echo "$summary"
    fail "the job did not end within 10 s"
    sed 's/^/    /' "$dir/out" | tail -30
    kill -KILL -- -$job 2>/dev/null
  fi
  wait $job
  local code=$?
  echo "$summary: exit $code after $took s"
  case " $(allowed_codes "$sig") " in
    *" $code "*) ;;
    *) fail "exit code $code, expected one of: $(allowed_codes "$sig")"; sed 's/^/    /' "$dir/out" | tail -30 ;;
  esac
  # Children of the ranks (the host compiler) go with them; give them a moment.
  local left=""
  for _ in $(seq 40); do
    left=$(tagged "$tag")
    [ -z "$left" ] && break
    sleep 0.05
  done
  if [ -n "$left" ]; then
    fail "processes left: $(for p in $left; do tr '\0' ' ' </proc/$p/cmdline 2>/dev/null; echo -n "($p) "; done)"
    kill -KILL $left 2>/dev/null
  fi
  local pid shm
  for pid in $pids; do
    shm=$(ls /dev/shm | grep -E "(^|[^0-9])$pid([^0-9]|$)")
    if [ -n "$shm" ]; then
      fail "left in /dev/shm: $shm"
      (cd /dev/shm && rm -f $shm)
    fi
  done
  if [ -d "$cache/tmp" ] && [ -n "$(ls -A "$cache/tmp")" ]; then
    fail "left in the cache's tmp/: $(ls -A "$cache/tmp" | tr '\n' ' ')"
    rm -rf "${cache:?}/tmp"/*
  fi
  sent[$sig]=$((${sent[$sig]:-0} + 1))
  hit[$scenario]=$((${hit[$scenario]:-0} + 1))
}

echo "fault injection: $np ranks, $cases cases, seed $seed"
for scenario in "${scenarios[@]}"; do
  [ -f "$here/scenarios/$scenario.lua" ] || continue
  mkdir -p "$work/warmup-$scenario"
  if ! IRIS_FI_DIR=$work/warmup-$scenario IRIS_FI_WARMUP=1 timeout 600 "${mpirun[@]}" -np "$np" "$iris" \
      "$here/scenarios/$scenario.lua" >"$work/warmup-$scenario/out" 2>&1; then
    fail "the warm-up run of $scenario failed"
    sed 's/^/    /' "$work/warmup-$scenario/out" | tail -20
  fi
done
for ((c = 0; c < cases; c++)); do
  scenario=${scenarios[c % ${#scenarios[@]}]}
  sig=${signals[(c / ${#scenarios[@]}) % 3]}
  run_case $c "$scenario" "$sig" $((RANDOM % np))
done
points=""
for s in "${scenarios[@]}"; do points+=" $s ${hit[$s]:-0},"; done
echo "cases: $cases at $np ranks; signals: SIGKILL ${sent[KILL]:-0}, SIGTERM ${sent[TERM]:-0}, SIGINT ${sent[INT]:-0};" \
  "points:${points%,}; failed: $failures"
rm -rf "$work"
[ $failures -eq 0 ]
