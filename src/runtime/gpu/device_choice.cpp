#include "runtime/gpu/device_choice.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace iris::runtime::gpu {

std::string describe_visibility(const char* visibility_variable) {
  const char* value = std::getenv(visibility_variable);
  if (!value) return format("%s unset", visibility_variable);
  return format("%s=%s", visibility_variable, value);
}

int device_for_local_rank(int local_rank, int device_count, const char* vendor, const char* visibility_variable) {
  if (device_count < 1) {
    throw Error(Errc::environment, format("no %s GPU visible to this process (%s)", vendor,
                                          describe_visibility(visibility_variable).c_str()));
  }
  if (local_rank < 0) throw Error(Errc::internal, format("negative node-local rank %d", local_rank));
  return local_rank % device_count;
}

}  // namespace iris::runtime::gpu
