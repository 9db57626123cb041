#!/bin/bash
# Several nodes on one GPU machine (docs/multinode.md): simulated nodes (IRIS_NODE_SIZE) whose traffic
# between them takes the host proxy and the transport. 2 ranks as 2 nodes of 1 GPU (and, with 4 GPUs,
# 4 ranks as 2 nodes of 2): the pattern matrices with pairs inside a node and across nodes side by side;
# put_block/get_block of 64 MiB across nodes against what the transport itself moves in the same run
# (target >= 0.8x); a device-initiated flag round trip next to an MPI ping-pong (scripts/bench/nodes_bench.lua).
# From a build carried there (tests/gpu/pack_build.sh); everything goes to $OUT/nodes.log and the terminal,
# a summary last.
#   tests/gpu/run_nodes.sh <build-dir> [backend, default cuda]
# The transport between nodes: IRIS_NODE_TRANSPORT (default auto: one_sided where MPI is CUDA-aware,
# else messages, which reach the heaps in GPU memory through each rank's own proxy); the script says
# which MPI it found and the bench which transport ran.
set -u
. "$(dirname "$0")/gpu_env.sh"
backend=${2:-cuda}
export IRIS_BACKEND=$backend
log=$logs/nodes.log
: >"$log"
cd "$root"

aware=$(ompi_info --parsable --all 2>/dev/null | grep -m1 "mpi_built_with_cuda_support:value" | cut -d: -f7)
echo "=== MPI: $(mpirun --version 2>&1 | head -1); built with CUDA support: ${aware:-unknown}; IRIS_NODE_TRANSPORT=${IRIS_NODE_TRANSPORT:-auto}" | tee -a "$log"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)

layouts=("2 1")
[ "$gpus" -ge 4 ] && layouts+=("4 2")
for layout in "${layouts[@]}"; do
  read -r ranks size <<<"$layout"
  # Block copies at 64 MiB; atomics and messages small: across nodes each is a round trip through the proxy.
  for case in "00_load --size 64MiB" "01_store --size 64MiB" "04_atomic_add --size 1MiB --rounds 100" \
              "06_message_passing --size 1MiB --rounds 100"; do
    read -r script args <<<"$case"
    # shellcheck disable=SC2086
    step "$script np$ranks nodes of $size" 180 env IRIS_NODE_SIZE="$size" mpirun --oversubscribe -np "$ranks" "$iris" \
      "scripts/$script.lua" $args
  done
  step "nodes_bench np$ranks nodes of $size" 120 env IRIS_NODE_SIZE="$size" mpirun --oversubscribe -np "$ranks" "$iris" \
    scripts/bench/nodes_bench.lua 64MiB
  # The suites CI runs over simulated nodes that compile few of the collectives' kernels on the spot
  # (nodes and ccl_p2p: ctx.ccl.send and recv, and copy_block, between the nodes).
  for suite in nodes kernels_atomics kernels_flags tensor_peer ccl_p2p; do
    step "lua/$suite np$ranks nodes of $size" 180 env IRIS_NODE_SIZE="$size" mpirun --oversubscribe -np "$ranks" "$iris" \
      test --timeout 170 "tests/lua/$suite.lua"
  done
done

{
  echo "================ nodes: summary ($backend, $gpus GPUs; log: $log) ================"
  grep -E "^=== [0-9a-z/_]+ np|^validated|^not validated|transport between nodes|MPI send, host|put_block via|get_block via|flag round trip|passed, .* failed|^=== exit" "$log" |
    grep -v "^=== exit 0 "
  if grep -qE "^=== exit [1-9]" "$log"; then echo "RESULT: FAILED"; else echo "RESULT: PASSED"; fi
} | tee "$logs/nodes-summary.txt"
grep -q "RESULT: PASSED" "$logs/nodes-summary.txt"
