// The hip backend: AMD GPUs through the HIP runtime (a plugin library linked against HIP, opened at
// run time where HIP is installed).
#pragma once

#include <memory>

#include "runtime/backend.hpp"

namespace iris::runtime {

// Throws Error(environment) saying why the backend cannot run here (HIP not installed, no device, ...).
std::unique_ptr<Backend> make_hip_backend(const comm::Comm& comm);

}  // namespace iris::runtime
