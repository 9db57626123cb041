#!/bin/bash
# Experiment (docs/perf.md, "The GEMM tile"): iris::gemm's tile against cuBLAS, outside iris-lua, so that
# variants of the device header can be timed side by side in one process. Needs nvcc and cuBLAS (CUDA 12
# or newer) where it is built and an sm_90 GPU where it runs; not part of the build or the tests.
#   docs/experiments/gemm_variants/build.sh ["name header-dir [nvcc flags]"] ...   (default: the four below)
#   ./gemm_lab [MxNxK ...]
# Each variant is a kernel like ctx.ops.matmul's built against a device header folder with its own
# flags: -DMINB=2 adds __launch_bounds__(256, 2) to the kernel; the ops_* variants compile a copy of
# kernels/ops/matmul.hip (-DKFILE=...) itself; the wide_* variants are wide_128x256.cu (a 128 x 256
# tile, for reference; -DSTAGES=n). Variants compile for sm_90a, where the header's bfloat16 tile runs
# on wgmma; -arch=sm_90 among a variant's flags compiles it for plain sm_90 instead, where the same
# header keeps mma.sync (mma_sync below). Every variant's result is checked against cuBLAS. variants.sh
# rebuilds the variants of docs/perf.md (split-k, the wgmma prototype) from the patches here.
set -e
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT_DIR:-$PWD}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
[ $# -gt 0 ] || set -- "two_per_sm $repo/device -DMINB=2" "mma_sync $repo/device -DMINB=2 -arch=sm_90" \
  "ops_kernel $repo/device -DKFILE=\"$repo/kernels/ops/matmul.hip\""
: > "$out/variants.inc"
objs=()
for spec in "$@"; do
  set -- $spec
  name=$1 dev=$2
  shift 2
  arch=-arch=sm_90a flags=()
  for f in "$@"; do case "$f" in -arch=*) arch=$f ;; *) flags+=("$f") ;; esac; done
  set -- "${flags[@]}"
  echo "DECL($name)" >> "$out/variants.inc"
  src=$here/variant.cu.in
  case "$name" in ops*) src=$here/variant_ops.cu.in ;; wide*) src=$here/wide_128x256.cu ;; esac
  "$NVCC" "$arch" -std=c++17 -O3 -I"$dev" -DKNAME=k_$name -DVNAME=$name -Dops_matmul_bfloat16=ops_matmul_bfloat16_$name "$@" \
    -include "$dev/iris/iris.hpp" -Xptxas -v -x cu -c "$src" -o "$out/v_$name.o" 2>&1 | grep -E "registers|spill" | sed "s/^/$name: /"
  objs+=("$out/v_$name.o")
done
"$NVCC" -arch=sm_90a -std=c++17 -O3 -I"$out" "$here/main.cu" "${objs[@]}" -lcublas -Xlinker --allow-multiple-definition \
  -o "$out/gemm_lab"
echo "built $out/gemm_lab"
