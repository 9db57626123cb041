// The hip backend: AMD GPUs through the HIP runtime API. libamdhip64 is opened at run time
// (hip_runtime.hpp), so iris-lua has no link-time dependency on HIP and the same binary starts on the
// NVIDIA machines. The class itself is in hip_backend_impl.hpp; docs/backends.md says how it maps the
// Backend interface.
#pragma once

#include <memory>

#include "runtime/backend.hpp"

namespace iris::runtime {

// Throws Error(environment) saying why the backend cannot run here (HIP not installed, no device, ...).
std::unique_ptr<Backend> make_hip_backend(const comm::Comm& comm);

// GPUs this process sees (after HIP_VISIBLE_DEVICES). Throws Error(environment) without HIP.
int hip_device_count();

}  // namespace iris::runtime
