// The cuda backend: NVIDIA GPUs through the driver API. libcuda and libnvrtc are opened at run time,
// so the same binary starts on machines without an NVIDIA driver.
#pragma once

#include <memory>

#include "runtime/backend.hpp"

namespace iris::runtime {

// Throws Error(environment) saying why the backend cannot run here (no driver, no device, ...).
std::unique_ptr<Backend> make_cuda_backend(const comm::Comm& comm);

}  // namespace iris::runtime
