// What every backend shares of the Backend interface (backend.hpp); the backends themselves are in
// cpu/, cuda/ and hip/, listed in backend_registry.cpp.
#include "runtime/backend.hpp"

#include <cstring>

#include "core/error.hpp"

namespace iris::runtime {

void Backend::refuse_while_capturing(const char* what) const {
  if (!capturing_) return;
  throw Error(Errc::invalid_argument,
              format("%s cannot run while ctx:capture(fn) records launches: it waits for the device, whose work "
                     "does not run until the graph is replayed; do it before or after the capture",
                     what));
}

void Backend::encode_tensor_map(const TensorMapSpec&, void*) const {
  throw Error(Errc::unsupported,
              format("tensor maps (TMA descriptors, iris::gemm::TensorMap) need the cuda backend on an NVIDIA H100 "
                     "or H200 (compute capability 9.0); the %s backend has no TMA: use iris::gemm's tile "
                     "(gemm::multiply) there",
                     name()));
}

void Backend::proxy_copy(void* dst, const void* src, size_t bytes) {
  if (!host_addressable()) {
    throw Error(Errc::internal, format("the %s backend cannot copy for the host proxy", name()));
  }
  std::memmove(dst, src, bytes);
}

}  // namespace iris::runtime
