#!/bin/sh
# `iris-lua lab start` copies a lab's skeleton and text from the binary into a new directory, and
# refuses to overwrite a lab started there before. usage: start_test.sh IRIS_LUA
set -eu
iris_lua=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$iris_lua" lab start 05 mine
cmp mine/05-one-shot.lua "$repo/labs/05-one-shot/skeleton.lua"
cmp mine/05-one-shot.md "$repo/docs/labs/05-one-shot.md"
test ! -e mine/solution.lua
echo "skeleton and text match the repository"
if "$iris_lua" lab start 5 mine 2>err.txt; then
  echo "started twice: accepted"
  exit 1
fi
grep -q "exists already" err.txt
echo "started twice: refused"
"$iris_lua" lab start one-shot
test -f 05-one-shot/05-one-shot.lua
