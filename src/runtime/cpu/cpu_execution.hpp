// The cpu backend's execution: kernels built by the host C++ compiler into shared objects, run by an
// executor with GPU semantics (see cpu_backend.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::runtime {

struct CpuExecution {
  explicit CpuExecution(const comm::Comm& comm);
  ~CpuExecution();

  void synchronize();
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code);
  void launch(Module& module, void* function, const LaunchConfig& config, void** args, const std::string& kernel_label);
  std::unique_ptr<Event> create_event();
  double time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args, int iterations);

  const comm::Comm& comm;
};

}  // namespace iris::runtime
