// The GEMM lab's NVRTC kernel (lab.cu compiles this file at run time with NVRTC, as iris-lua compiles
// kernels/ops/*.hip: `#include <iris/iris.hpp>` first, -std=c++17 -lineinfo, sm_90a): ctx.ops.matmul's
// whole-kernel GEMM on Hopper (iris::gemm::tma, A row-major, B row-major), so that the lab measures what
// NVRTC makes of the header beside what nvcc makes of it.
__global__ void IRIS_GEMM_TMA_KERNEL ops_matmul_tma_bfloat16(const __grid_constant__ iris::gemm::TensorMap a,
                                                             const __grid_constant__ iris::gemm::TensorMap b,
                                                             const __grid_constant__ iris::gemm::TensorMap c, long m,
                                                             long n, long k) {
  iris::gemm::tma::run<iris::bfloat16>(a, b, c, m, n, k, blockIdx.x, gridDim.x);
}
__global__ void IRIS_GEMM_TMA_KERNEL ops_matmul_tma_float16(const __grid_constant__ iris::gemm::TensorMap a,
                                                            const __grid_constant__ iris::gemm::TensorMap b,
                                                            const __grid_constant__ iris::gemm::TensorMap c, long m,
                                                            long n, long k) {
  iris::gemm::tma::run<iris::half>(a, b, c, m, n, k, blockIdx.x, gridDim.x);
}
