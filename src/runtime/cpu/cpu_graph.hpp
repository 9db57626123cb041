// What the cpu backend records of a launch while capturing (ctx:capture; cpu_graph.cpp runs them again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::runtime {

// A launch as a CUDA graph's kernel node keeps it: the kernel, its configuration and a copy of its
// arguments' bytes.
struct CpuRecordedLaunch {
  Module* module = nullptr;
  void* function = nullptr;
  LaunchConfig config;
  std::vector<size_t> offsets;  // where each argument's bytes start in `bytes`
  std::vector<uint8_t> bytes;   // the arguments, each on a 16-byte boundary
  std::string label;
};

}  // namespace iris::runtime
