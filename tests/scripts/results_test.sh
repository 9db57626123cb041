#!/bin/sh
# Runs a script with --csv and --json into a fresh folder, then checks both files: the CSV's header holds
# COLUMNS and ROWS lines follow it, the JSON is JSON (iris.json, strict) with the same ROWS rows.
#   results_test.sh IRIS_LUA RANKS "MPIRUN..." ROWS COLUMNS SCRIPT [ARGS...]
# ROWS is a number, or cpu=N,gpu=M for a script that measures more on a GPU (IRIS_BACKEND says which).
set -eu
iris_lua=$1 ranks=$2 mpirun=$3 rows=$4 columns=$5
shift 5
case $rows in
  cpu=*,gpu=*)
    if [ "${IRIS_BACKEND:-cpu}" = cpu ]; then rows=${rows#cpu=}; rows=${rows%%,*}; else rows=${rows##*gpu=}; fi ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "$ranks" = 1 ]; then
  "$iris_lua" "$@" --csv "$dir/results.csv" --json "$dir/results.json"
else
  # shellcheck disable=SC2086
  $mpirun -np "$ranks" "$iris_lua" "$@" --csv "$dir/results.csv" --json "$dir/results.json"
fi
"$iris_lua" "$here/check_results.lua" "$dir/results.csv" "$dir/results.json" "$rows" "$columns"
