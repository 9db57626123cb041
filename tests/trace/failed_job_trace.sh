#!/bin/sh
# A failed job still leaves its trace (issue 27, item 2): `mpirun -np 2 iris-lua --trace t.json s.lua`
# wrote nothing when a rank failed. $1: iris-lua, $2: the failure (fixtures/failing_job.lua), $3...: the
# launcher's words ("" for one rank). Prints the job's exit code and what check_job_end.lua reads.
iris=$1
how=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ranks=1
[ $# -gt 0 ] && ranks=2
"$@" "$iris" --trace "$dir/t.json" "$here/fixtures/failing_job.lua" "$how" "$dir/ready" >"$dir/out" 2>&1 &
job=$!
if [ "$how" = interrupt ]; then
  for _ in $(seq 600); do [ -s "$dir/ready.0" ] && { [ $ranks = 1 ] || [ -s "$dir/ready.1" ]; } && break; sleep 0.05; done
  sleep 0.3
  for f in "$dir"/ready.*; do kill -INT "$(cat "$f")"; done  # Ctrl-C reaches every process of the job
fi
wait $job
echo "exit $?"
"$iris" "$here/check_job_end.lua" "$dir/t.json" "$ranks"
ls -A "$dir" | grep -c '\.part-' | sed 's/^/part files left: /'
