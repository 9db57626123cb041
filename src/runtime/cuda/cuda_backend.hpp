// The cuda backend: NVIDIA GPUs through the driver API. libcuda.so.1 is opened at run time
// (cuda_driver.hpp), so the same binary starts on machines without an NVIDIA driver. The class itself
// is in cuda_backend_impl.hpp; docs/backends.md says how it maps the Backend interface.
#pragma once

#include <memory>

#include "runtime/backend.hpp"

namespace iris::runtime {

// Throws Error(environment) saying why the backend cannot run here (no driver, no device, ...).
std::unique_ptr<Backend> make_cuda_backend(const comm::Comm& comm);

// GPUs this process sees (after CUDA_VISIBLE_DEVICES). Throws Error(environment) without a driver.
int cuda_device_count();

}  // namespace iris::runtime
