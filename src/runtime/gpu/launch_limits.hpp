// Checks a launch against the device's and the kernel's limits before the driver sees it, so a bad
// grid, block or shared-memory size is an error naming the limit instead of a bare
// CUDA_ERROR_INVALID_VALUE.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/backend.hpp"

namespace iris::runtime::gpu {

// The device's launch limits (as the driver reports them) and its shared memory.
struct DeviceLimits : LaunchLimits {
  size_t max_shared_per_block = 0;  // static + dynamic, the most a kernel may opt in to
};

struct KernelLimits {
  unsigned max_threads_per_block = 0;  // lower than the device's when registers limit the kernel
  size_t static_shared_bytes = 0;
};

// Throws Error(launch) "launch of <label>: ..." naming the first limit `config` breaks.
void check_launch(const LaunchConfig& config, const DeviceLimits& device, const KernelLimits& kernel,
                  const std::string& label, const std::string& device_name);

// "{256,1,1}", as launch messages print dimensions.
std::string describe_dims(const Dim3& dims);

}  // namespace iris::runtime::gpu
