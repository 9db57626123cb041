// The hip backend's class: what only HIP does, on top of what both GPU backends share
// (gpu/gpu_backend.hpp, over the adaptor in hip_api.hpp). Its three source files, the same shape as
// the cuda backend's:
//   hip_backend.cpp  device choice and properties, the stream; compiles the shared code for HIP
//   hip_memory.cpp   allocating the heap in fine-grained memory, peer access between GPUs
//   hip_modules.cpp  loading modules (code objects)
//
// HIP has no explicit contexts: the device is selected per thread (bind(): hipSetDevice) and the
// runtime keeps one context per device and process.
#pragma once

#include <hip/hip_runtime_api.h>

#include <string>

#include "runtime/gpu/gpu_backend.hpp"
#include "runtime/hip/hip_api.hpp"

namespace iris::runtime {

// The shared code is compiled once for HIP, in hip_backend.cpp; the other files only call it.
extern template class gpu::GpuBackend<hip::Api>;

class HipBackend final : public gpu::GpuBackend<hip::Api> {
 public:
  explicit HipBackend(const comm::Comm& comm);
  ~HipBackend() override;

  CodeTarget code_target() const override { return CodeTarget{"hiprtc", arch_}; }
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code) override;
  // Selects this backend's device on the calling thread (a no-op when it already is).
  void bind() override;

 private:
  void* allocate_heap_memory(size_t bytes) override;
  void reach_peer_gpu(int ordinal, int peer) override;

  const hip::Runtime& api;  // the runtime, for what only this backend calls (the shared code: `calls`)
  std::string arch_;  // the full target id, "gfx90a:sramecc+:xnack-", as hiprtc's --offload-arch takes it
};

}  // namespace iris::runtime
