// ctx.ops.matmul (src/lua/iris/ops.lua; docs/ops.md): c = a b on this rank alone, a persistent grid of
// blocks over the 128 x 128 tiles of c. The GEMM of the bulk-synchronous baselines (ops_bench); no
// communication, so no call protocol. One kernel per element type, the tile loop inline in each
// (ops_call.hpp says why).
#include <iris/impl/ops_call.hpp>

namespace {

template <class T>
__device__ __forceinline__ void run(const void* a_, const void* b_, void* c_, long m, long n, long k, long a_stride,
                                    long b_stride, long c_stride) {
  using namespace iris;
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  T* c = static_cast<T*>(c_);
  const gemm::Matrix<T> A = gemm::matrix(a, m, k, a_stride), B = gemm::matrix(b, k, n, b_stride);
  for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    gemm::Accumulator acc;
    gemm::clear(acc);
    gemm::multiply(acc, A, B, tile.row, tile.col);
    gemm::store(acc, ccl::view(c, m, n, c_stride), tile);
  }
}

}  // namespace

// The loop for matrices whose rows are contiguous (strides equal to their widths, the common case)
// apart from the general one: knowing the strides are the widths spares the tile loop registers at the
// 128 of IRIS_GEMM_KERNEL, and the same loop ran slower with strides of their own (docs/perf.md, "The
// GEMM tile on wgmma, built in").
template <class T>
__device__ __forceinline__ void run_either(const void* a, const void* b, void* c, long m, long n, long k, long a_stride,
                                           long b_stride, long c_stride) {
  if constexpr (sizeof(T) == 2) {  // float32's mma.sync loop twice spilled (668 bytes)
    if (a_stride == k && b_stride == n && c_stride == n) {
      run<T>(a, b, c, m, n, k, k, n, n);
      return;
    }
  }
  run<T>(a, b, c, m, n, k, a_stride, b_stride, c_stride);
}

// One kernel per element type (ops_call.hpp says why).
__global__ void IRIS_GEMM_KERNEL ops_matmul_float16(const void* a, const void* b, void* c, long m, long n, long k,
                                                    long a_stride, long b_stride, long c_stride) {
  run_either<iris::half>(a, b, c, m, n, k, a_stride, b_stride, c_stride);
}
__global__ void IRIS_GEMM_KERNEL ops_matmul_bfloat16(const void* a, const void* b, void* c, long m, long n, long k,
                                                     long a_stride, long b_stride, long c_stride) {
  run_either<iris::bfloat16>(a, b, c, m, n, k, a_stride, b_stride, c_stride);
}
__global__ void IRIS_GEMM_KERNEL ops_matmul_float32(const void* a, const void* b, void* c, long m, long n, long k,
                                                    long a_stride, long b_stride, long c_stride) {
  run_either<float>(a, b, c, m, n, k, a_stride, b_stride, c_stride);
}

// On an H100 or H200 (kernels compiled for sm_90a), 16-bit matrices whose rows lie on 16-byte
// boundaries: the whole-kernel GEMM (gemm.hpp, "The whole-kernel GEMM on Hopper"), 384 threads a block,
// IRIS_GEMM_TMA_SHARED_BYTES of dynamic shared memory, one block per SM; A (m x k), B (k x n) and C as
// tensor maps that ops.lua encodes (boxes 128 x 64, 64 x 64, 64 x 64). Elsewhere run() fails with a
// message, and ops.lua launches the kernels above instead.
__global__ void IRIS_GEMM_TMA_KERNEL ops_matmul_tma_float16(const __grid_constant__ iris::gemm::TensorMap a,
                                                            const __grid_constant__ iris::gemm::TensorMap b,
                                                            const __grid_constant__ iris::gemm::TensorMap c, long m,
                                                            long n, long k) {
  iris::gemm::tma::run<iris::half>(a, b, c, m, n, k, blockIdx.x, gridDim.x);
}
__global__ void IRIS_GEMM_TMA_KERNEL ops_matmul_tma_bfloat16(const __grid_constant__ iris::gemm::TensorMap a,
                                                             const __grid_constant__ iris::gemm::TensorMap b,
                                                             const __grid_constant__ iris::gemm::TensorMap c, long m,
                                                             long n, long k) {
  iris::gemm::tma::run<iris::bfloat16>(a, b, c, m, n, k, blockIdx.x, gridDim.x);
}
