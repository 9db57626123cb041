#!/bin/bash
# The GEMM lab of issue 25 (README.md beside this): builds gemm_tma_lab (nvcc, cuBLAS, NVRTC) unless a
# built one is given, then runs every variant on the four ops_bench shapes' local GEMMs at 1 and 2 ranks
# (K and K/2), bfloat16 and float16, and the four operand layouts on ragged shapes; each variant in a
# process of its own (a hang ends that process only). Prints one line per variant and shape and writes
# them to $OUT/gemm_tma_lab.txt (OUT defaults to .).
#   docs/experiments/gemm_tma/run.sh [path/to/gemm_tma_lab]
# Building it here, to carry it to the GPU machine:
#   docs/experiments/gemm_tma/run.sh --build-only .carry/gemm_tma_lab
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${OUT:-.}
mkdir -p "$out"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda=$(cd "$(dirname "$NVCC")/.." && pwd)

build() {
  mkdir -p "$(dirname "$1")"
  "$NVCC" -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I"$repo/device" "$here/lab.cu" \
    -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcublas -lcuda -lnvrtc -Xlinker -rpath="$cuda/lib64" -o "$1"
}

if [ "${1:-}" = "--build-only" ]; then
  build "${2:?where to build it}" && echo "built $2"
  exit $?
fi

bin=${1:-}
if [ -n "$bin" ] && ! "$bin" 2>/dev/null | grep -q usage; then
  echo "the carried $bin does not start here; building one"
  bin=
fi
if [ -z "$bin" ]; then
  bin=$out/gemm_tma_lab
  build "$bin" || { echo "building gemm_tma_lab failed"; exit 1; }
fi

log=$out/gemm_tma_lab.txt
: > "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee -a "$log"
shapes="8192x4608x36864 8192x8192x2048 16384x8192x512 4096x4096x256 8192x4608x18432 8192x8192x1024 16384x8192x256 4096x4096x128"
ragged="1000x1000x1000 1032x776x520 128x256x64 136x264x72"
for dtype in bf16 f16; do
  IRIS_REPO=$repo timeout 120 "$bin" "$dtype" layouts $ragged 2>&1 | tee -a "$log"
  for variant in tma nvrtc tma_s3_e256 tma_s3_e128x2 tma_s4_e128 tile; do
    IRIS_REPO=$repo timeout 150 "$bin" "$dtype" "$variant" $shapes 2>&1 | tee -a "$log"
    status=${PIPESTATUS[0]}
    [ "$status" = 0 ] || echo "$dtype $variant: exit status $status" | tee -a "$log"
  done
done
echo "summary (x cuBLAS per variant and shape; WRONG, HANG or exit statuses above mean a failed variant):"
grep -E "x cuBLAS" "$log" | awk '{printf "%-4s %-16s %-14s %7s TFLOP/s %5s x cuBLAS %s\n", $1, $2, $9, $12, $14, $21}'
