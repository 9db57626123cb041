#!/bin/bash
# The figures of docs/perf.md and the issues' GPU checks, in one go on a GPU machine, from a build
# carried there (tests/gpu/pack_build.sh). Each step's output goes to $OUT/bench.log (or
# <build>/gpu-logs) and to the terminal.
#   tests/gpu/run_benchmarks.sh <build-dir> [backend, default cuda]
set -u
. "$(dirname "$0")/gpu_env.sh"
backend=${2:-cuda}
export IRIS_BACKEND=$backend
log=$logs/bench.log
cd "$root"

step "heap symmetry, 2 ranks on 2 GPUs" 180 mpirun -np 2 "$iris" tests/lua/heap_symmetry.lua 4194304
step "heap symmetry, 4 ranks sharing 2 GPUs" 180 mpirun -np 4 --oversubscribe "$iris" tests/lua/heap_symmetry.lua 4194304
step "heap setup and allocation latency" 180 mpirun -np 2 "$iris" scripts/bench/heap_bench.lua 1GiB 2000
step "compile: cold vs cache hit" 180 "$iris" scripts/bench/compile_bench.lua
step "launch overhead" 180 "$iris" scripts/bench/launch_bench.lua 100000
step "put_block/get_block vs copy engine" 180 mpirun -np 2 "$iris" scripts/bench/bandwidth_bench.lua 1GiB
step "put_block/get_block vs copy engine: shapes" 180 mpirun -np 2 "$iris" scripts/bench/bandwidth_bench.lua 1GiB sweep
# The REPL at 2 ranks through a pseudo-terminal (script(1)): an expression, Ctrl-C in a loop, :ranks, Ctrl-D.
repl_keys() {
  sleep 8; printf 'ctx = iris.init()\r'; sleep 4; printf 'ctx:arange(4)\r'; sleep 2
  printf 'iris.rank() * 10\r'; sleep 2; printf 'local x = 0 while true do x = x + 1 end\r'; sleep 3
  printf '\003'; sleep 3; printf ':ranks\r'; sleep 2; printf '\004'; sleep 4
}
step "REPL at 2 ranks on a terminal" 180 bash -c "$(declare -f repl_keys); repl_keys | script -qfec 'mpirun -np 2 $iris' /dev/null"
