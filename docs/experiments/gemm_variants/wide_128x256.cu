// A lab variant for reference only (build.sh: a variant named wide*): not iris::gemm's tile but a
// 128 x 256 one, 8 warps of 64 x 64, every warp on all of k, STAGES steps of k32 in dynamic shared
// memory, one block per SM. It tells what 64 x 64 warp tiles give without the split of k and the
// exchange that iris::gemm's 128 x 128 tile needs for them. It uses the header's instructions, staged
// layout and swizzle (gemm_mma.hpp, gemm_layout.hpp); M a multiple of 1024, N of 256, K of 32,
// row-major operands (what the lab's shapes are), bfloat16 out written straight from the fragments.
#include <iris/iris.hpp>
#include <iris/gemm.hpp>
#ifndef STAGES
#define STAGES 4
#endif
using namespace iris::gemm::detail;
using T = iris::bfloat16;
constexpr int kA = 8192, kStage = 8192 + 16384;

extern "C" __global__ void __launch_bounds__(256, 1) KNAME(const T* a, const T* b, T* c, long m, long n, long k) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, wm = warp / 4, wn = warp % 4;
  const long tiles_n = n / 256, tiles = (m / 128) * tiles_n, steps = k / 32;
  // This thread's chunks: A 128 rows x 4 chunks (2 a thread), B 32 rows of k x 32 chunks (4 a thread).
  int a_to[2], b_to[4];
  long a_from[2], b_from[4];
  for (int i = 0; i < 2; ++i) {
    const int c = t + i * 256;
    a_to[i] = offset(c / 4, c % 4, 4);
    a_from[i] = (long)(c / 4) * k + (c % 4) * 8;
  }
  for (int i = 0; i < 4; ++i) {
    const int c = t + i * 256;
    b_to[i] = kA + offset(c / 32, c % 32, 32);
    b_from[i] = (long)(c / 32) * n + (c % 32) * 8;
  }
  int pa[2][4], pb[2][4];
  for (int s = 0; s < 2; ++s) {
    const int kk = s * 16;
    for (int mi = 0; mi < 4; ++mi) pa[s][mi] = offset(wm * 64 + mi * 16 + lane % 16, (kk + (lane / 16) * 8) / 8, 4);
    for (int nj = 0; nj < 4; ++nj) pb[s][nj] = kA + offset(kk + lane % 16, (wn * 64 + nj * 16 + (lane / 16) * 8) / 8, 32);
  }
  for (long idx = blockIdx.x; idx < tiles; idx += gridDim.x) {
    const long tm = (idx / (8 * tiles_n)) * 8 + idx % 8, tn = (idx % (8 * tiles_n)) / 8;
    const T* a0 = a + tm * 128 * k;
    const T* b0 = b + tn * 256;
    auto stage = [&](long step) {
      uint8_t* to = smem + (step % STAGES) * kStage;
      for (int i = 0; i < 2; ++i) copy16_async(to + a_to[i], a0 + a_from[i] + step * 32, 16);
      for (int i = 0; i < 4; ++i) copy16_async(to + b_to[i], b0 + b_from[i] + step * 32 * n, 16);
    };
    float acc[4][8][4] = {};
    __syncthreads();
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < steps) stage(s);
      commit_async();
    }
    for (long step = 0; step < steps; ++step) {
      wait_async<STAGES - 2>();
      __syncthreads();
      if (step + STAGES - 1 < steps) stage(step + STAGES - 1);
      commit_async();
      const uint8_t* tile = smem + (step % STAGES) * kStage;
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        uint32_t af[4][4], bf[8][2];
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) load_matrices(af[mi], tile + pa[s][mi], false);
#pragma unroll
        for (int nj = 0; nj < 4; ++nj) {
          uint32_t r[4];
          load_matrices(r, tile + pb[s][nj], true);
          bf[2 * nj][0] = r[0], bf[2 * nj][1] = r[1], bf[2 * nj + 1][0] = r[2], bf[2 * nj + 1][1] = r[3];
        }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
          for (int ni = 0; ni < 8; ++ni) mma16816<T>(acc[mi][ni], af[mi], bf[ni]);
      }
    }
    wait_async<0>();
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int ni = 0; ni < 8; ++ni)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long i = tm * 128 + wm * 64 + mi * 16 + lane / 4 + h * 8;
          const long j = tn * 256 + wn * 64 + ni * 8 + 2 * (lane % 4);
          __nv_bfloat162 v = __floats2bfloat162_rn(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
          *reinterpret_cast<__nv_bfloat162*>(c + i * n + j) = v;
        }
  }
}
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
void CAT(launch_, VNAME)(const void* a, const void* b, void* c, long m, long n, long k, int grid, cudaStream_t s) {
  KNAME<<<grid, 256, STAGES * kStage, s>>>((const T*)a, (const T*)b, (T*)c, m, n, k);
}
int CAT(occ_, VNAME)() {
  cudaFuncSetAttribute(KNAME, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGES * kStage);
  int nb;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, KNAME, 256, STAGES * kStage);
  return nb;
}
