#!/bin/bash
# The lab of docs/perf.md, "The GEMM tile: 64 x 64 warp tiles and wgmma" (2026-11-24): copies device/
# three times (as it is, with splitk.patch, with wgmma.patch) under OUT_DIR and builds gemm_lab with
# the variants of that table. Then: $OUT_DIR/gemm_lab 8192x8192x2048 16384x8192x512 8192x4608x36864 4096x4096x4096
#   splitk.patch  intra-block split of k: two groups of 4 warps, 64 x 64 warp tiles, each group on one
#                 half of every staged k32, partial sums exchanged through the arena at the end of
#                 multiply (one block per SM: 248 registers). Lab knobs: LAB_STAGES=n (n stages in
#                 dynamic shared memory, with -DSMEM=n*16384), LAB_PREFETCH (fragments a stage ahead).
#   wgmma.patch   warpgroup g computes rows 64g..64g+63 with wgmma m64n128k16 from the staged tiles
#                 (descriptors on the existing swizzles; mn-major tiles stored as two 64-column halves):
#                 126 registers, two blocks per SM. bfloat16 only, sm_90a only; lab only.
#   wide_128x256.cu  (wide_*) a 128 x 256 tile of 8 warps of 64 x 64, for reference.
set -e
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT_DIR:-$PWD}
mkdir -p "$out"
for v in base splitk wgmma; do
  rm -rf "$out/dev_$v"
  cp -r "$repo/device" "$out/dev_$v"
  [ "$v" = base ] || patch -s -p1 -d "$out/dev_$v" < "$here/$v.patch"
done
"$here/build.sh" "two_per_sm $out/dev_base -DMINB=2" "ops_kernel $out/dev_base -DKFILE=\"$repo/kernels/ops/matmul.hip\"" \
  "splitk $out/dev_splitk" "splitk_s4 $out/dev_splitk -DLAB_STAGES=4 -DSMEM=65536" \
  "splitk_s6 $out/dev_splitk -DLAB_STAGES=6 -DSMEM=98304" \
  "splitk_pf_s4 $out/dev_splitk -DLAB_STAGES=4 -DSMEM=65536 -DLAB_PREFETCH" \
  "splitk_pf_s6 $out/dev_splitk -DLAB_STAGES=6 -DSMEM=98304 -DLAB_PREFETCH" \
  "wide_s3 $out/dev_base -DSTAGES=3" "wide_s4 $out/dev_base -DSTAGES=4" \
  "wgmma $out/dev_wgmma -DMINB=2" "wgmma_free $out/dev_wgmma"
