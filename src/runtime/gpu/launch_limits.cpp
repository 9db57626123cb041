#include "runtime/gpu/launch_limits.hpp"

#include "core/error.hpp"

namespace iris::runtime::gpu {

std::string describe_dims(const Dim3& dims) { return format("{%u,%u,%u}", dims.x, dims.y, dims.z); }

namespace {

[[noreturn]] void refuse(const std::string& label, const std::string& why) {
  throw Error(Errc::launch, format("launch of %s: %s", label.c_str(), why.c_str()));
}

void check_dims(const char* what, const Dim3& dims, const unsigned (&limit)[3], const std::string& label,
                const std::string& device_name) {
  const unsigned values[3] = {dims.x, dims.y, dims.z};
  const char axes[3] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; ++i) {
    if (values[i] == 0) {
      refuse(label, format("%s %s has a zero dimension: every dimension of grid and block is at least 1", what,
                           describe_dims(dims).c_str()));
    }
    if (values[i] > limit[i]) {
      refuse(label, format("%s.%c = %u exceeds %s's limit of %u", what, axes[i], values[i], device_name.c_str(),
                           limit[i]));
    }
  }
}

}  // namespace

void check_launch(const LaunchConfig& config, const DeviceLimits& device, const KernelLimits& kernel,
                  const std::string& label, const std::string& device_name) {
  check_dims("grid", config.grid, device.max_grid, label, device_name);
  check_dims("block", config.block, device.max_block, label, device_name);

  const unsigned long long threads =
      static_cast<unsigned long long>(config.block.x) * config.block.y * config.block.z;
  if (threads > device.max_threads_per_block) {
    refuse(label, format("block %s is %llu threads; %s runs at most %u threads per block",
                         describe_dims(config.block).c_str(), threads, device_name.c_str(),
                         device.max_threads_per_block));
  }
  if (kernel.max_threads_per_block != 0 && threads > kernel.max_threads_per_block) {
    refuse(label, format("block %s is %llu threads; this kernel runs at most %u threads per block on %s "
                         "(its register use limits it): launch smaller blocks",
                         describe_dims(config.block).c_str(), threads, kernel.max_threads_per_block,
                         device_name.c_str()));
  }

  const size_t shared = config.shared_bytes + kernel.static_shared_bytes;
  if (shared > device.max_shared_per_block) {
    refuse(label, format("%s of dynamic shared memory (+ %s static) per block is more than the %s %s allows",
                         human_bytes(config.shared_bytes).c_str(), human_bytes(kernel.static_shared_bytes).c_str(),
                         human_bytes(device.max_shared_per_block).c_str(), device_name.c_str()));
  }
}

}  // namespace iris::runtime::gpu
