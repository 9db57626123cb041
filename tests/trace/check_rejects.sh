#!/bin/sh
# check_trace.lua must fail on a damaged trace: cut short (not JSON), without the device's kernel spans,
# without the kernels' own events, or read as a job of more ranks than it had.
#   check_rejects.sh IRIS_LUA
set -eu
iris_lua=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$iris_lua" --trace "$dir/trace.json" "$here/fixtures/all_reduce_job.lua"
"$iris_lua" "$here/check_trace.lua" "$dir/trace.json" 1
size=$(wc -c < "$dir/trace.json")
head -c $((size / 2)) "$dir/trace.json" > "$dir/cut.json"
grep -v '"cat": "kernel"' "$dir/trace.json" > "$dir/no_kernels.json"
grep -v '"cat": "device"' "$dir/trace.json" > "$dir/no_events.json"
rejected=0
for case in "cut.json 1" "no_kernels.json 1" "no_events.json 1" "trace.json 2"; do
  set -- $case
  if "$iris_lua" "$here/check_trace.lua" "$dir/$1" "$2" 2> "$dir/why"; then
    echo "check_rejects.sh: check_trace.lua accepted $1 as a trace of $2 rank(s)" >&2
    exit 1
  fi
  echo "rejected $1 as $2 rank(s): $(head -n 1 "$dir/why")"
  rejected=$((rejected + 1))
done
echo "check_rejects.sh: all $rejected damaged traces rejected"
