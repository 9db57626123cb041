// The cuda backend: device choice, the primary context and the stream; and the code both GPU backends
// share (waiting, faults, memory, kernels, graphs: gpu/*.hpp), compiled here for CUDA.
#include "runtime/cuda/cuda_backend.hpp"

#include "core/log.hpp"
#include "runtime/cuda/cuda_backend_impl.hpp"
#include "runtime/gpu/device_choice.hpp"
#include "runtime/gpu/execution.hpp"
#include "runtime/gpu/graph.hpp"
#include "runtime/gpu/memory.hpp"

namespace iris::runtime {

namespace {

// The context current on this thread, as far as bind() knows: skips a driver call per operation.
thread_local CUcontext t_bound_context = nullptr;

int attribute(const cuda::Driver& cu, CUdevice device, CUdevice_attribute which, const char* name) {
  int value = 0;
  CUresult result = cu.cuDeviceGetAttribute(&value, which, device);
  if (result != CUDA_SUCCESS) {
    throw Error(Errc::environment, format("reading the GPU's %s: cuDeviceGetAttribute returned %s", name,
                                          cuda::error_text(&cu, result).c_str()));
  }
  return value;
}

}  // namespace

CudaBackend::CudaBackend(const comm::Comm& comm) : GpuBackend(cuda::Api{cuda::driver()}, comm), cu(calls.cu) {
  device_count_ = cuda_device_count();
  device_ = gpu::device_for_local_rank(comm.local_rank(), device_count_, "NVIDIA", cuda::Api::visibility_variable);
  check(cu.cuDeviceGet(&device_handle_, device_), "cuDeviceGet", format("opening GPU %d", device_));
  char name[256] = {};
  check(cu.cuDeviceGetName(name, sizeof name - 1, device_handle_), "cuDeviceGetName", format("naming GPU %d", device_));
  device_name_ = name;

  compute_major_ = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  compute_minor_ = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  if (!attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing")) {
    throw Error(Errc::environment, format("GPU %d (%s) has no unified addressing, which the symmetric heap needs",
                                          device_, device_name_.c_str()));
  }
  limits_.max_threads_per_block = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "block limit");
  limits_.max_block[0] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "block limit");
  limits_.max_block[1] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "block limit");
  limits_.max_block[2] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "block limit");
  limits_.max_grid[0] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "grid limit");
  limits_.max_grid[1] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "grid limit");
  limits_.max_grid[2] = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "grid limit");
  limits_.max_shared_per_block =
      attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory limit");
  limits_.multiprocessors = attribute(cu, device_handle_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors");

  check(cu.cuDevicePrimaryCtxRetain(&context_, device_handle_), "cuDevicePrimaryCtxRetain",
        format("starting GPU %d (%s)", device_, device_name_.c_str()));
  try {
    bind();
    // Non-blocking: the legacy default stream, which other libraries in the process may use, never
    // serializes with ours.
    check(cu.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "creating the stream");
  } catch (...) {
    cu.cuDevicePrimaryCtxRelease(device_handle_);
    t_bound_context = nullptr;
    throw;
  }
  log::write(log::Level::info,
             format("cuda: node-local rank %d on GPU %d of %d: %s (sm_%d%d), driver for CUDA %s", comm.local_rank(),
                    device_, device_count_, device_name_.c_str(), compute_major_, compute_minor_,
                    cuda::version_text(cu.version).c_str()));
}

CudaBackend::~CudaBackend() {
  if (!release_for_close()) return;
  cu.cuStreamDestroy(stream_);
  cu.cuDevicePrimaryCtxRelease(device_handle_);
  t_bound_context = nullptr;
}

// A compute capability 9.0 GPU (H100, H200) gets sm_90a, the arch-specific target: its cubins run on
// 9.0 only, which this device is, and it has Hopper's warpgroup instructions (wgmma), which iris::gemm
// uses for 16-bit inputs (plain sm_90 has none of them). Others get sm_<major><minor>.
CodeTarget CudaBackend::code_target() const {
  const char* specific = compute_major_ == 9 && compute_minor_ == 0 ? "a" : "";
  return CodeTarget{"nvrtc", format("sm_%d%d%s", compute_major_, compute_minor_, specific)};
}

void CudaBackend::bind() {
  if (t_bound_context == context_) return;
  check(cu.cuCtxSetCurrent(context_), "cuCtxSetCurrent", format("making GPU %d current", device_));
  t_bound_context = context_;
}

std::unique_ptr<Backend> make_cuda_backend(const comm::Comm& comm) { return std::make_unique<CudaBackend>(comm); }

int cuda_device_count() {
  const cuda::Driver& cu = cuda::driver();
  int count = 0;
  CUresult result = cu.cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS) {
    throw Error(Errc::environment,
                format("counting NVIDIA GPUs: cuDeviceGetCount returned %s", cuda::error_text(&cu, result).c_str()));
  }
  return count;
}

// What CudaBackend inherits from gpu/gpu_backend.hpp, memory.hpp and kernels.hpp, compiled for CUDA.
template class gpu::GpuBackend<cuda::Api>;

}  // namespace iris::runtime
