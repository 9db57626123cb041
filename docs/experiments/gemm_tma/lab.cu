// GEMM lab for issue 25 (docs/experiments/gemm_tma/README.md): iris::gemm::tma (the whole-kernel GEMM on
// Hopper) against cuBLAS in one process, 16-bit in, float accumulation, 16-bit out. Each variant's result
// is checked against cuBLAS's (largest relative error, and elements off by more than 2% + 0.5), then
// timed: median of 9 calls after 2 warm-ups, cuBLAS likewise in the same process.
//   gemm_tma_lab DTYPE VARIANT SHAPE...      DTYPE bf16 | f16; SHAPE MxNxK
// VARIANT:
//   tma            tma::run<T> with Config<4, 64, 2> (4 stages, 64-column epilogue boxes, 2 buffers): the default
//   tma_s3_e256    Config<3, 256, 1>;  tma_s3_e128x2: Config<3, 128, 2>;  tma_s4_e128: Config<4, 128, 1>
//   nvrtc          kernels/ops/matmul.hip (ctx.ops.matmul's ops_matmul_tma_*) compiled at run time by NVRTC as
//                  iris-lua compiles kernels (-std=c++17 -lineinfo --gpu-architecture=sm_90a, iris/iris.hpp first): the default
//   tile           the 128 x 128 block tile of iris::gemm (gemm::multiply, 256 threads, two blocks per SM):
//                  what ctx.ops.matmul runs today
//   layouts        tma's four operand layouts (A row- or column-major, B row- or column-major), checked
// IRIS_REPO (default .) is the repository root: device/ for NVRTC's includes and the kernel file.
// A launch that has not finished after 20 s is reported as a hang and the process exits 3.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <iris/iris.hpp>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define CU(x)                                                                            \
  do {                                                                                   \
    CUresult r_ = (x);                                                                   \
    if (r_ != CUDA_SUCCESS) {                                                            \
      const char* s_ = "?";                                                              \
      cuGetErrorString(r_, &s_);                                                         \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_);                              \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

using iris::gemm::TensorMap;

template <class T, bool AK, bool BK, class Cfg>
__global__ void IRIS_GEMM_TMA_KERNEL tma_kernel(const __grid_constant__ TensorMap a, const __grid_constant__ TensorMap b,
                                                const __grid_constant__ TensorMap c, long m, long n, long k) {
  iris::gemm::tma::run<T, AK, BK, Cfg>(a, b, c, m, n, k, blockIdx.x, gridDim.x);
}

template <class T>
__global__ void IRIS_GEMM_KERNEL tile_kernel(const T* a, const T* b, T* c, long m, long n, long k) {
  using namespace iris;
  const gemm::Matrix<T> A = gemm::matrix(a, m, k, k), B = gemm::matrix(b, k, n, n);
  for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    gemm::Accumulator acc;
    gemm::clear(acc);
    gemm::multiply(acc, A, B, tile.row, tile.col);
    gemm::store(acc, ccl::view(c, m, n, n), tile);
  }
}

// Small integers (-2 .. 2): every product and sum is exact in float, so cuBLAS and a correct kernel agree
// to the output's rounding.
template <class T>
__global__ void fill(T* p, long n, unsigned seed) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995;
    h ^= h >> 15;
    p[i] = T((float)((int)(h % 5) - 2));
  }
}
template <class T>
__global__ void diff(const T* x, const T* y, long n, unsigned long long* bad, unsigned int* worst) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const float a = (float)x[i], b = (float)y[i];
    const float d = fabsf(a - b);
    if (!(d <= 0.02f * fabsf(b) + 0.5f)) atomicAdd(bad, 1ull);
    const float rel = d != d ? 1e30f : d / (fabsf(b) + 1.0f);
    atomicMax(worst, __float_as_uint(rel));
  }
}

static cudaStream_t stream;

// Waits for the stream, at most 20 s: a kernel that never finishes is reported, not waited for.
static void finish(const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      printf("%s: %s\n", what, cudaGetErrorString(e));
      fflush(stdout);
      exit(2);
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
      printf("%s: HANG (not finished after 20 s)\n", what);
      fflush(stdout);
      _exit(3);
    }
    usleep(100);
  }
}

// A row-major rows x cols matrix of 16-bit elements (row_stride elements apart) as a 2-d tensor map with
// a box of box_cols x box_rows and 128-byte swizzle (gemm.hpp, "The whole-kernel GEMM on Hopper").
static TensorMap make_map(const void* ptr, bool bf16, uint64_t rows, uint64_t cols, uint64_t row_stride,
                          uint32_t box_cols, uint32_t box_rows) {
  CUtensorMap map;
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {row_stride * 2};
  cuuint32_t box[2] = {box_cols, box_rows};
  cuuint32_t element_strides[2] = {1, 1};
  CU(cuTensorMapEncodeTiled(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                            const_cast<void*>(ptr), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  TensorMap out;
  static_assert(sizeof(out) == sizeof(map), "a TensorMap is a CUtensorMap");
  memcpy(&out, &map, sizeof(map));
  return out;
}

struct Maps {
  TensorMap a, b, c;
};
// A: m x k row-major (a_k_major) or k x m row-major; B: k x n row-major (!b_k_major) or n x k row-major.
static Maps maps_for(const void* a, const void* b, void* c, bool bf16, long m, long n, long k, bool a_k_major,
                     bool b_k_major) {
  Maps s;
  s.a = a_k_major ? make_map(a, bf16, m, k, k, 64, 128) : make_map(a, bf16, k, m, m, 64, 64);
  s.b = b_k_major ? make_map(b, bf16, n, k, k, 64, 256) : make_map(b, bf16, k, n, n, 64, 64);
  s.c = make_map(c, bf16, m, n, n, 64, 64);
  return s;
}

struct Runner {
  std::function<void(const void*, const void*, void*, long, long, long)> launch;
  int registers = -1, local_bytes = -1;
};

template <class T, bool AK, bool BK, class Cfg>
static Runner tma_runner(bool bf16, int sms) {
  auto kernel = tma_kernel<T, AK, BK, Cfg>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, kernel));
  Runner r;
  r.registers = attr.numRegs;
  r.local_bytes = (int)attr.localSizeBytes;
  r.launch = [=](const void* a, const void* b, void* c, long m, long n, long k) {
    const Maps s = maps_for(a, b, c, bf16, m, n, k, AK, BK);
    const int grid = (int)std::min<int64_t>(sms, iris::gemm::tma::tiles(m, n));
    kernel<<<grid, iris::gemm::tma::kThreads, Cfg::kSharedBytes, stream>>>(s.a, s.b, s.c, m, n, k);
  };
  return r;
}

template <class T>
static Runner tile_runner(int sms) {
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, tile_kernel<T>));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tile_kernel<T>, 256, 0));
  Runner r;
  r.registers = attr.numRegs;
  r.local_bytes = (int)attr.localSizeBytes;
  r.launch = [=](const void* a, const void* b, void* c, long m, long n, long k) {
    const int grid = (int)std::min<int64_t>((int64_t)sms * per_sm, ((m + 127) / 128) * ((n + 127) / 128));
    tile_kernel<T><<<grid, 256, 0, stream>>>((const T*)a, (const T*)b, (T*)c, m, n, k);
  };
  return r;
}

static std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    printf("cannot read %s\n", path.c_str());
    exit(1);
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

static Runner nvrtc_runner(bool bf16, int sms, const std::string& repo) {
  const std::string name = bf16 ? "ops_matmul_tma_bfloat16" : "ops_matmul_tma_float16";
  const std::string source = "#include <iris/iris.hpp>\n#line 1 \"kernels/ops/matmul.hip\"\n" +
                             read_text(repo + "/kernels/ops/matmul.hip");
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "matmul.hip", 0, nullptr, nullptr) != NVRTC_SUCCESS) exit(1);
  nvrtcAddNameExpression(prog, name.c_str());
  const std::string inc_device = "-I" + repo + "/device";
  const char* cuda_home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  const std::string inc_cuda = std::string("-I") + cuda_home + "/include";
  const char* options[] = {"-std=c++17", "-lineinfo", "--gpu-architecture=sm_90a", inc_device.c_str(),
                           inc_cuda.c_str()};
  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult result = nvrtcCompileProgram(prog, 5, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, &log[0]);
  if (result != NVRTC_SUCCESS) {
    printf("NVRTC failed: %s\n%s\n", nvrtcGetErrorString(result), log.c_str());
    exit(1);
  }
  if (log.size() > 1) printf("NVRTC log: %s\n", log.c_str());
  printf("NVRTC compiled %s in %.1f s\n", name.c_str(), seconds);
  size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(prog, cubin.data());
  const char* lowered = nullptr;
  nvrtcGetLoweredName(prog, name.c_str(), &lowered);
  CUmodule module;
  CU(cuModuleLoadData(&module, cubin.data()));
  CUfunction f;
  CU(cuModuleGetFunction(&f, module, lowered));
  nvrtcDestroyProgram(&prog);
  constexpr int smem = iris::gemm::tma::Config<>::kSharedBytes;
  CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  Runner r;
  CU(cuFuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CU(cuFuncGetAttribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
  r.launch = [=](const void* a, const void* b, void* c, long m, long n, long k) {
    Maps s = maps_for(a, b, c, bf16, m, n, k, true, false);
    const unsigned grid = (unsigned)std::min<int64_t>(sms, iris::gemm::tma::tiles(m, n));
    void* args[] = {&s.a, &s.b, &s.c, &m, &n, &k};
    CU(cuLaunchKernel(f, grid, 1, 1, iris::gemm::tma::kThreads, 1, 1, smem, (CUstream)stream, args, nullptr));
  };
  return r;
}

template <class T>
static void lab(bool bf16, const std::string& variant, const std::vector<std::string>& shapes, int sms,
                const std::string& repo) {
  const char* dt = bf16 ? "bf16" : "f16";
  struct Named {
    std::string name;
    Runner runner;
    bool a_k_major, b_k_major;
  };
  std::vector<Named> runners;
  using namespace iris::gemm::tma;
  if (variant == "tma") runners.push_back({"tma", tma_runner<T, true, false, Config<4, 64, 2>>(bf16, sms), true, false});
  else if (variant == "tma_s3_e256") runners.push_back({variant, tma_runner<T, true, false, Config<3, 256, 1>>(bf16, sms), true, false});
  else if (variant == "tma_s3_e128x2") runners.push_back({variant, tma_runner<T, true, false, Config<3, 128, 2>>(bf16, sms), true, false});
  else if (variant == "tma_s4_e128") runners.push_back({variant, tma_runner<T, true, false, Config<4, 128, 1>>(bf16, sms), true, false});
  else if (variant == "nvrtc") runners.push_back({"nvrtc", nvrtc_runner(bf16, sms, repo), true, false});
  else if (variant == "tile") runners.push_back({"tile", tile_runner<T>(sms), true, false});
  else if (variant == "layouts") {
    runners.push_back({"tma_Arow_Brow", tma_runner<T, true, false, Config<>>(bf16, sms), true, false});
    runners.push_back({"tma_Arow_Bcol", tma_runner<T, true, true, Config<>>(bf16, sms), true, true});
    runners.push_back({"tma_Acol_Brow", tma_runner<T, false, false, Config<>>(bf16, sms), false, false});
    runners.push_back({"tma_Acol_Bcol", tma_runner<T, false, true, Config<>>(bf16, sms), false, true});
  } else {
    printf("unknown variant %s\n", variant.c_str());
    exit(1);
  }
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, stream);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  unsigned long long* bad;
  unsigned int* worst;
  CK(cudaMalloc(&bad, 8));
  CK(cudaMalloc(&worst, 4));
  const cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  for (const std::string& sh : shapes) {
    long m, n, k;
    if (sscanf(sh.c_str(), "%ldx%ldx%ld", &m, &n, &k) != 3) {
      printf("bad shape %s\n", sh.c_str());
      exit(1);
    }
    T *a, *b, *c, *ref;
    CK(cudaMalloc(&a, m * k * 2));
    CK(cudaMalloc(&b, k * n * 2));
    CK(cudaMalloc(&c, m * n * 2));
    CK(cudaMalloc(&ref, m * n * 2));
    fill<<<1024, 256, 0, stream>>>(a, m * k, 1);
    fill<<<1024, 256, 0, stream>>>(b, k * n, 2);
    const double flops = 2.0 * m * n * k;
    auto timeit = [&](const std::function<void()>& f, const char* what) {
      f();
      f();
      finish(what);
      std::vector<float> ts;
      for (int r = 0; r < 9; ++r) {
        cudaEventRecord(e0, stream);
        f();
        cudaEventRecord(e1, stream);
        finish(what);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        ts.push_back(ms);
      }
      std::sort(ts.begin(), ts.end());
      return ts[ts.size() / 2];
    };
    for (const Named& v : runners) {
      // cuBLAS is column-major: C^T (n x m) = op(B) op(A) with B and A as they lie.
      const float one = 1, zero = 0;
      auto cublas = [&] {
        cublasGemmEx(h, v.b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N, v.a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T, n, m, k, &one,
                     b, type, v.b_k_major ? k : n, a, type, v.a_k_major ? k : m, &zero, ref, type, n,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      const float cms = timeit(cublas, "cuBLAS");
      CK(cudaMemsetAsync(c, 0xff, m * n * 2, stream));  // NaNs: an element never written is an error
      v.runner.launch(a, b, c, m, n, k);
      CK(cudaGetLastError());
      finish(v.name.c_str());
      CK(cudaMemsetAsync(bad, 0, 8, stream));
      CK(cudaMemsetAsync(worst, 0, 4, stream));
      diff<<<1024, 256, 0, stream>>>(c, ref, m * n, bad, worst);
      unsigned long long nb = 0;
      unsigned int w = 0;
      CK(cudaMemcpyAsync(&nb, bad, 8, cudaMemcpyDeviceToHost, stream));
      CK(cudaMemcpyAsync(&w, worst, 4, cudaMemcpyDeviceToHost, stream));
      finish("check");
      float rel;
      memcpy(&rel, &w, 4);
      const float ms = timeit([&] { v.runner.launch(a, b, c, m, n, k); }, v.name.c_str());
      printf("%-4s %-16s cuBLAS %8.3f ms %6.1f TFLOP/s | %-16s %8.3f ms %6.1f TFLOP/s %5.2f x cuBLAS  max rel err %.2e "
             "%s  (%d registers, %d B local)\n",
             dt, sh.c_str(), cms, flops / cms / 1e9, v.name.c_str(), ms, flops / ms / 1e9, cms / ms, rel,
             nb ? "WRONG" : "ok", v.runner.registers, v.runner.local_bytes);
      if (nb) printf("  %llu of %ld elements differ from cuBLAS's\n", nb, m * n);
      fflush(stdout);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(ref);
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    printf("usage: %s bf16|f16 VARIANT MxNxK...\n", argv[0]);
    return 2;
  }
  const std::string dtype = argv[1], variant = argv[2];
  std::vector<std::string> shapes(argv + 3, argv + argc);
  const char* repo = getenv("IRIS_REPO") ? getenv("IRIS_REPO") : ".";
  CK(cudaFree(nullptr));
  CU(cuInit(0));
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaStreamCreate(&stream));
  if (dtype == "bf16") lab<iris::bfloat16>(true, variant, shapes, sms, repo);
  else if (dtype == "f16") lab<iris::half>(false, variant, shapes, sms, repo);
  else {
    printf("dtype bf16 or f16, got %s\n", dtype.c_str());
    return 2;
  }
  return 0;
}
