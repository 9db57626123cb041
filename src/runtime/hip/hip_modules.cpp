// The hip backend's own step for kernels: loading a module (a code object through hipModuleLoadData).
// Kernel lookup, module variables, launches, events and the raw-launch loop are shared with the cuda
// backend (gpu/execution.hpp).
#include "runtime/gpu/execution.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

std::unique_ptr<Module> HipBackend::load_module(const std::vector<uint8_t>& code) {
  throw_if_faulted();
  if (code.empty()) throw Error(Errc::invalid_argument, "loading an empty module: the compiler produced no code");
  bind();
  drain_for_proxy("loading a module");  // (Backend::drain_before_copies)
  hipModule_t module = nullptr;
  check(api.hipModuleLoadData(&module, code.data()), "hipModuleLoadData",
        format("loading a code object (%s) on GPU %d (%s, %s)", human_bytes(code.size()).c_str(), device_,
               device_name_.c_str(), arch_.c_str()),
        Errc::compile);
  return std::make_unique<gpu::LoadedModule<hip::Api>>(*this, module);
}

}  // namespace iris::runtime
