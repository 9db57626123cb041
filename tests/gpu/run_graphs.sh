#!/bin/bash
# Graphs (ctx:capture, docs/graphs.md) on a GPU machine, from a build carried there
# (tests/gpu/pack_build.sh): tests/lua/graph_capture.lua and ccl_graph.lua on the cuda backend at 1 rank
# and at <ranks>, then tests/gpu/graph_replay.lua (a loop of kernels, device barriers, ctx.ccl's and
# NCCL's all_reduce on iris's stream beside a kernel, each captured and replayed and checked; a table of
# eager against replayed microseconds). With more ranks than GPUs the ranks share GPUs under CUDA MPS. Logs go to $OUT (or
# <build>/gpu-logs).
#   tests/gpu/run_graphs.sh <build-dir> [ranks, default: the GPUs, at least 2]
set -u
. "$(dirname "$0")/gpu_env.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
ranks=${2:-$((gpus > 2 ? gpus : 2))}
log=$logs/graphs.log
export IRIS_BACKEND=cuda IRIS_SHARED_GPU_WARNING=0
cd "$root"

if [ "$ranks" -gt "$gpus" ]; then
  mps_start "$ranks ranks on $gpus GPU(s)"
fi
mpi=(mpirun --oversubscribe --bind-to none -np "$ranks")

step "graph_capture.lua at 1 rank" 300 "$iris" test tests/lua/graph_capture.lua
step "graph_capture.lua at $ranks ranks" 300 "${mpi[@]}" "$iris" test tests/lua/graph_capture.lua
step "ccl_graph.lua at 1 rank (compiles the collectives)" 900 "$iris" test --timeout 600 tests/lua/ccl_graph.lua
step "ccl_graph.lua at $ranks ranks" 300 "${mpi[@]}" "$iris" test tests/lua/ccl_graph.lua
step "graph_replay.lua at $ranks ranks" 300 "${mpi[@]}" "$iris" tests/gpu/graph_replay.lua
