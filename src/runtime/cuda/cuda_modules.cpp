// The cuda backend's own step for kernels: loading a module (cubin, fatbin or PTX through
// cuModuleLoadDataEx, with the JIT's error log). Kernel lookup, module variables, launches, events and
// the raw-launch loop are shared with the hip backend (gpu/execution.hpp).
#include <cstring>

#include "runtime/cuda/cuda_backend_impl.hpp"
#include "runtime/gpu/execution.hpp"

namespace iris::runtime {

namespace {

bool is_binary_image(const std::vector<uint8_t>& code) {
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
  return code.size() >= 4 && (std::memcmp(code.data(), elf, 4) == 0 || std::memcmp(code.data(), fatbin, 4) == 0);
}

}  // namespace

std::unique_ptr<Module> CudaBackend::load_module(const std::vector<uint8_t>& code) {
  throw_if_faulted();
  if (code.empty()) throw Error(Errc::invalid_argument, "loading an empty module: the compiler produced no code");
  bind();
  // cubin and fatbin load as they are; PTX is text the driver compiles, and must end with a NUL.
  const bool binary = is_binary_image(code);
  std::vector<uint8_t> text;
  const void* image = code.data();
  if (!binary && code.back() != 0) {
    text.reserve(code.size() + 1);
    text.assign(code.begin(), code.end());
    text.push_back(0);
    image = text.data();
  }
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log - 1))};
  CUmodule module = nullptr;
  CUresult result = cu.cuModuleLoadDataEx(&module, image, 2, options, values);
  if (result != CUDA_SUCCESS) {
    const std::string what = format("loading a module (%s, %s) on GPU %d (%s, sm_%d%d)", binary ? "cubin" : "PTX",
                                    human_bytes(code.size()).c_str(), device_, device_name_.c_str(), compute_major_,
                                    compute_minor_);
    if (cuda::is_device_fault(result)) fail(result, "cuModuleLoadDataEx", what, Errc::compile);
    throw Error(Errc::compile, format("%s: cuModuleLoadDataEx returned %s%s%s", what.c_str(),
                                      cuda::error_text(&cu, result).c_str(), log[0] ? "; the driver's log:\n" : "", log));
  }
  return std::make_unique<gpu::LoadedModule<cuda::Api>>(*this, module);
}

}  // namespace iris::runtime
