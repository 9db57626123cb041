#!/bin/sh
# Runs fixtures/all_reduce_job.lua with a trace, then checks the file (tests/trace/CMakeLists.txt):
#   trace_job.sh IRIS_LUA RANKS flag|env [MPIRUN...]
# flag: iris-lua --trace FILE; env: IRIS_TRACE=FILE. The file must parse as JSON with Python's parser
# too where python3 is installed (an independent reader), then check_trace.lua checks what it holds.
set -eu
iris_lua=$1
ranks=$2
how=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=$dir/trace.json
if [ "$ranks" = 1 ]; then
  set -- "$iris_lua"
else
  set -- "$@" -np "$ranks" "$iris_lua"
fi
if [ "$how" = flag ]; then
  "$@" --trace "$trace" "$here/fixtures/all_reduce_job.lua"
else
  IRIS_TRACE=$trace "$@" "$here/fixtures/all_reduce_job.lua"
fi
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json, sys; json.load(open(sys.argv[1])); print("python3 json.load: ok")' "$trace"
fi
"$iris_lua" "$here/check_trace.lua" "$trace" "$ranks"
left=$(ls "$dir" | grep -v '^trace.json$' || true)
[ -z "$left" ] || { echo "trace_job.sh: files left beside the trace: $left" >&2; exit 1; }
