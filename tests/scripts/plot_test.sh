#!/bin/sh
# Runs a script with --plot into a fresh folder, then checks the picture: well-formed XML (xmllint too,
# where it is installed) with COUNT elements ELEMENT of class CLASS. PLOT_CHECKED names the file checked
# when the script derives it from --plot's (default: plot.svg, the file given).
#   plot_test.sh IRIS_LUA RANKS "MPIRUN..." ELEMENT CLASS COUNT SCRIPT [ARGS...]
set -eu
iris_lua=$1 ranks=$2 mpirun=$3 element=$4 class=$5 count=$6
shift 6
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "$ranks" = 1 ]; then
  "$iris_lua" "$@" --plot "$dir/plot.svg" | tee "$dir/stdout"
else
  # shellcheck disable=SC2086
  $mpirun -np "$ranks" "$iris_lua" "$@" --plot "$dir/plot.svg" | tee "$dir/stdout"
fi
# A benchmark whose reference could not run (NCCL refuses two ranks on one GPU) draws no line for it:
# PLOT_COUNT_WITHOUT_REFERENCE is the count then.
if [ -n "${PLOT_COUNT_WITHOUT_REFERENCE:-}" ] && grep -q 'reference: none' "$dir/stdout"; then
  count=$PLOT_COUNT_WITHOUT_REFERENCE
fi
checked="$dir/${PLOT_CHECKED:-plot.svg}"
if command -v xmllint >/dev/null 2>&1; then xmllint --noout "$checked" && echo "xmllint: well-formed"; fi
"$iris_lua" "$here/check_svg.lua" "$checked" "$element" "$class" "$count"
