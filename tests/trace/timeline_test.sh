#!/bin/sh
# scripts/trace_timeline.lua draws every span of a 2-rank job's trace: the SVG is well-formed with one
# <rect class="span"> per span of the file.
#   timeline_test.sh IRIS_LUA MPIRUN...
set -eu
iris_lua=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" -np 2 "$iris_lua" --trace "$dir/trace.json" "$here/fixtures/all_reduce_job.lua"
"$iris_lua" "$here/../../scripts/trace_timeline.lua" "$dir/trace.json" "$dir/timeline.svg" --title "two ranks"
spans=$(grep -c '"ph": "X"' "$dir/trace.json")
"$iris_lua" "$here/../scripts/check_svg.lua" "$dir/timeline.svg" rect span "$spans"
