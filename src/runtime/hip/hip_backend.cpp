// The hip backend: device choice and properties, and the stream; and the code both GPU backends share
// (waiting, faults, memory, kernels, graphs: gpu/*.hpp), compiled here for HIP.
#include "runtime/hip/hip_backend.hpp"

#include "core/log.hpp"
#include "runtime/gpu/device_choice.hpp"
#include "runtime/gpu/execution.hpp"
#include "runtime/gpu/graph.hpp"
#include "runtime/gpu/memory.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

namespace {

// The device selected on this thread, as far as bind() knows: skips a runtime call per operation.
thread_local int t_bound_device = -1;

int count_devices(const hip::Runtime& api) {
  int count = 0;
  hipError_t result = api.hipGetDeviceCount(&count);
  if (result == hipErrorNoDevice) return 0;
  if (result != hipSuccess) {
    throw Error(Errc::environment,
                format("counting AMD GPUs: hipGetDeviceCount returned %s", hip::error_text(&api, result).c_str()));
  }
  return count;
}

}  // namespace

HipBackend::HipBackend(const comm::Comm& comm) : GpuBackend(hip::Api{hip::runtime()}, comm), api(calls.api) {
  device_count_ = count_devices(api);
  device_ = gpu::device_for_local_rank(comm.local_rank(), device_count_, "AMD", hip::Api::visibility_variable);
  device_handle_ = device_;
  bind();
  char name[256] = {};
  check(api.hipDeviceGetName(name, sizeof name - 1, device_), "hipDeviceGetName", format("naming GPU %d", device_));
  device_name_ = name;
  hipDeviceProp_t properties{};
  check(api.hipGetDeviceProperties(&properties, device_), "hipGetDeviceProperties",
        format("reading GPU %d's properties", device_));
  arch_ = properties.gcnArchName;

  const auto attribute = [&](hipDeviceAttribute_t which, const char* what) {
    int value = 0;
    check(api.hipDeviceGetAttribute(&value, which, device_), "hipDeviceGetAttribute",
          format("reading GPU %d's %s", device_, what));
    return value;
  };
  limits_.max_threads_per_block = attribute(hipDeviceAttributeMaxThreadsPerBlock, "block limit");
  limits_.max_block[0] = attribute(hipDeviceAttributeMaxBlockDimX, "block limit");
  limits_.max_block[1] = attribute(hipDeviceAttributeMaxBlockDimY, "block limit");
  limits_.max_block[2] = attribute(hipDeviceAttributeMaxBlockDimZ, "block limit");
  limits_.max_grid[0] = attribute(hipDeviceAttributeMaxGridDimX, "grid limit");
  limits_.max_grid[1] = attribute(hipDeviceAttributeMaxGridDimY, "grid limit");
  limits_.max_grid[2] = attribute(hipDeviceAttributeMaxGridDimZ, "grid limit");
  // AMD GPUs have no opt-in above this: the whole LDS (64 KiB) is available to every kernel.
  limits_.max_shared_per_block = attribute(hipDeviceAttributeMaxSharedMemoryPerBlock, "shared memory limit");
  limits_.multiprocessors = attribute(hipDeviceAttributeMultiprocessorCount, "multiprocessors");

  check(api.hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), "hipStreamCreateWithFlags",
        "creating the stream");
  log::write(log::Level::info,
             format("hip: node-local rank %d on GPU %d of %d: %s (%s), HIP %s", comm.local_rank(), device_,
                    device_count_, device_name_.c_str(), arch_.c_str(), hip::version_text(api.version).c_str()));
}

HipBackend::~HipBackend() {
  if (!release_for_close()) return;
  (void)api.hipStreamDestroy(stream_);  // best effort: nothing to do about a failure at teardown
}

void HipBackend::bind() {
  if (t_bound_device == device_) return;
  check(api.hipSetDevice(device_), "hipSetDevice", format("selecting GPU %d", device_));
  t_bound_device = device_;
}

std::unique_ptr<Backend> make_hip_backend(const comm::Comm& comm) { return std::make_unique<HipBackend>(comm); }

int hip_device_count() { return count_devices(hip::runtime()); }

// What HipBackend inherits from gpu/gpu_backend.hpp, memory.hpp and kernels.hpp, compiled for HIP.
template class gpu::GpuBackend<hip::Api>;

}  // namespace iris::runtime
