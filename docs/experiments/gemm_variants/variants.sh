#!/bin/bash
# The lab of docs/perf.md, "The GEMM tile": builds gemm_lab (under OUT_DIR) with today's header beside
# the variants it was measured against. Then: $OUT_DIR/gemm_lab 8192x8192x2048 16384x8192x512 8192x4608x36864 4096x4096x4096
#   integrated    device/ as it is, compiled for sm_90a: the bfloat16 tile on wgmma
#   mma_sync      device/ as it is, compiled for sm_90: the same tile on mma.sync (8 warps of 64 x 32)
#   call          integrated with the tile loop in a function the kernel calls (LAB_CALL), as
#                 kernels/ops do: ptxas then serializes wgmma (warning C7510), and this measures it
#   ops_kernel    kernels/ops/matmul.hip itself on today's header (its run<T> is __noinline__)
#   ops_inline    the same with run<T> inlined into the kernel (sed), all three dtypes in one function
# and, from the patches here, on the header they were written against (device/ just before wgmma went
# in, taken from git):
#   splitk.patch  intra-block split of k: two groups of 4 warps, 64 x 64 warp tiles, each group on one
#                 half of every staged k32, partial sums exchanged through the arena at the end of
#                 multiply (one block per SM: 248 registers). Lab knobs: LAB_STAGES=n (n stages in
#                 dynamic shared memory, with -DSMEM=n*16384), LAB_PREFETCH (fragments a stage ahead).
#   wgmma.patch   the prototype of the wgmma tile: bfloat16 only, row-major A and B checked
#   wide_128x256.cu  (wide_*) a 128 x 256 tile of 8 warps of 64 x 64, for reference.
# LAB_QUICK=1 builds only the first six (the GPU check of the integrated header).
set -e
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT_DIR:-$PWD}
mkdir -p "$out"
# The commit that brought wgmma into the header, found by its content so that rebases do not move it.
wgmma_commit=$(git -C "$repo" log -1 --format=%H -S IRIS_GEMM_WGMMA -- device/iris/impl/gemm_mma.hpp)
rm -rf "$out/dev_old" && mkdir -p "$out/dev_old"
git -C "$repo" archive "$wgmma_commit^" device | tar -x -C "$out/dev_old" --strip-components=1
for v in splitk wgmma; do
  rm -rf "$out/dev_$v"
  cp -r "$out/dev_old" "$out/dev_$v"
  patch -s -p1 -d "$out/dev_$v" < "$here/$v.patch"
done
sed 's/__noinline__//' "$repo/kernels/ops/matmul.hip" > "$out/matmul_inline.hip"
set -- "integrated $repo/device -DMINB=2" "mma_sync $repo/device -DMINB=2 -arch=sm_90" \
  "call $repo/device -DMINB=2 -DLAB_CALL" "ops_kernel $repo/device -DKFILE=\"$repo/kernels/ops/matmul.hip\"" \
  "ops_inline $repo/device -DKFILE=\"$out/matmul_inline.hip\"" "wgmma_patch $out/dev_wgmma -DMINB=2"
[ -n "$LAB_QUICK" ] || set -- "$@" "splitk $out/dev_splitk" "splitk_s4 $out/dev_splitk -DLAB_STAGES=4 -DSMEM=65536" \
  "splitk_s6 $out/dev_splitk -DLAB_STAGES=6 -DSMEM=98304" \
  "splitk_pf_s4 $out/dev_splitk -DLAB_STAGES=4 -DSMEM=65536 -DLAB_PREFETCH" \
  "splitk_pf_s6 $out/dev_splitk -DLAB_STAGES=6 -DSMEM=98304 -DLAB_PREFETCH" \
  "wide_s3 $out/dev_old -DSTAGES=3" "wide_s4 $out/dev_old -DSTAGES=4"
"$here/build.sh" "$@"
