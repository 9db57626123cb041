// GEMM lab (build.sh): iris::gemm variants against cuBLAS, bfloat16 in, float accumulation, bfloat16 out,
// row-major; each result checked against cuBLAS's, then timed (median of 7 after 2 warm-ups).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <cmath>
typedef void (*Launch)(const void* a, const void* b, void* c, long m, long n, long k, int grid, cudaStream_t s);
struct Variant { const char* name; Launch launch; int (*blocks_per_sm)(); };
#define DECL(x) void launch_##x(const void*, const void*, void*, long, long, long, int, cudaStream_t); int occ_##x();
#include "variants.inc"
#undef DECL
#define DECL(x) {#x, launch_##x, occ_##x},
static Variant variants[] = {
#include "variants.inc"
};
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
__global__ void fill(__nv_bfloat16* p, long n, unsigned seed) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = __float2bfloat16((float)((int)(h % 5) - 2));
  }
}
__global__ void diff(const __nv_bfloat16* x, const __nv_bfloat16* y, long n, unsigned long long* bad) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    float a = __bfloat162float(x[i]), b = __bfloat162float(y[i]);
    if (fabsf(a - b) > 0.02f * fabsf(b) + 0.5f) atomicAdd(bad, 1ull);
  }
}
int main(int argc, char** argv) {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, sms);
  std::vector<std::string> shapes = {"8192x8192x2048", "16384x8192x512", "4096x4096x4096", "8192x4608x36864", "16384x8192x2048", "1000x1000x1000"};
  if (argc > 1) { shapes.clear(); for (int i = 1; i < argc; ++i) shapes.push_back(argv[i]); }
  cublasHandle_t h; cublasCreate(&h);
  cudaStream_t st; CK(cudaStreamCreate(&st)); cublasSetStream(h, st);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  unsigned long long* bad; CK(cudaMalloc(&bad, 8));
  for (auto& sh : shapes) {
    long m, n, k; sscanf(sh.c_str(), "%ldx%ldx%ld", &m, &n, &k);
    __nv_bfloat16 *a, *b, *c, *ref;
    CK(cudaMalloc(&a, m * k * 2)); CK(cudaMalloc(&b, k * n * 2)); CK(cudaMalloc(&c, m * n * 2)); CK(cudaMalloc(&ref, m * n * 2));
    fill<<<1024, 256, 0, st>>>(a, m * k, 1); fill<<<1024, 256, 0, st>>>(b, k * n, 2);
    double flops = 2.0 * m * n * k;
    auto timeit = [&](auto f) {
      f(); f(); CK(cudaStreamSynchronize(st));
      std::vector<float> ts;
      for (int r = 0; r < 7; ++r) { cudaEventRecord(e0, st); f(); cudaEventRecord(e1, st); CK(cudaEventSynchronize(e1)); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
      std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
    };
    float one = 1, zero = 0;
    auto cublas = [&] { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, n, a, CUDA_R_16BF, k, &zero, ref, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); };
    float cms = timeit(cublas);
    printf("%-16s cuBLAS %8.3f ms %7.1f TFLOP/s\n", sh.c_str(), cms, flops / cms / 1e9);
    for (auto& v : variants) {
      int grid = sms * v.blocks_per_sm();
      CK(cudaMemsetAsync(c, 0, m * n * 2, st));
      v.launch(a, b, c, m, n, k, grid, st);
      CK(cudaGetLastError()); CK(cudaStreamSynchronize(st));
      CK(cudaMemsetAsync(bad, 0, 8, st));
      diff<<<1024, 256, 0, st>>>(c, ref, m * n, bad);
      unsigned long long nb; CK(cudaMemcpyAsync(&nb, bad, 8, cudaMemcpyDeviceToHost, st)); CK(cudaStreamSynchronize(st));
      float ms = timeit([&] { v.launch(a, b, c, m, n, k, grid, st); });
      printf("%-16s %-22s %8.3f ms %7.1f TFLOP/s %5.2f x cuBLAS  grid %d  %s\n", sh.c_str(), v.name, ms, flops / ms / 1e9, cms / ms, grid, nb ? "WRONG" : "ok");
    }
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(ref);
  }
  return 0;
}
