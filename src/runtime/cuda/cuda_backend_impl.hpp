// The cuda backend's class: what only CUDA does, on top of what both GPU backends share
// (gpu/gpu_backend.hpp, over the adaptor in cuda_api.hpp). Its three source files:
//   cuda_backend.cpp  device choice, the primary context, the stream; compiles the shared code for CUDA
//   cuda_memory.cpp   allocating the heap (cuMemAlloc, SYNC_MEMOPS), peer access between GPUs
//   cuda_modules.cpp  loading modules (cubin, fatbin or PTX, with the JIT's error log), tensor maps
//
// One primary context per process, made current per thread by bind().
#pragma once

#include <cuda.h>

#include <string>

#include "runtime/cuda/cuda_api.hpp"
#include "runtime/gpu/gpu_backend.hpp"

namespace iris::runtime {

// The shared code is compiled once for CUDA, in cuda_backend.cpp; the other files only call it.
extern template class gpu::GpuBackend<cuda::Api>;

class CudaBackend final : public gpu::GpuBackend<cuda::Api> {
 public:
  explicit CudaBackend(const comm::Comm& comm);
  ~CudaBackend() override;

  CodeTarget code_target() const override;
  // Programmatic dependent launch is Hopper's (sm_90) and later.
  bool early_start() const override { return compute_major_ >= 9; }
  void encode_tensor_map(const TensorMapSpec& spec, void* out) const override;
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code) override;
  // Makes the context current on the calling thread (a no-op when it already is).
  void bind() override;

 private:
  void* allocate_heap_memory(size_t bytes) override;
  void reach_peer_gpu(int ordinal, int peer) override;

  const cuda::Driver& cu;  // the driver, for what only this backend calls (the shared code: `calls`)
  int compute_major_ = 0, compute_minor_ = 0;
  CUcontext context_ = nullptr;
  bool warned_atomics_ = false;
};

}  // namespace iris::runtime
