#include "runtime/runtime.hpp"

#include "capi/process.hpp"
#include "core/error.hpp"
#include "heap/symmetric_heap.hpp"
#include "kernels/registry.hpp"

namespace iris::runtime {
namespace {
std::unique_ptr<Runtime> g_runtime;
}

Runtime::Runtime(comm::Comm& c) : comm(c) {}
Runtime::~Runtime() = default;

Runtime& init(comm::Comm&, const InitOptions&) {
  throw Error(Errc::unsupported, "iris.init (the symmetric heap) is not available in this version of iris-lua");
}

Runtime& current() {
  if (!g_runtime) throw Error(Errc::invalid_argument, "call iris.init() first");
  return *g_runtime;
}

bool initialized() { return g_runtime != nullptr; }

void synchronize_if_initialized() {
  if (g_runtime) g_runtime->backend->synchronize();
}

void shutdown() { g_runtime.reset(); }

}  // namespace iris::runtime

namespace iris::capi {
void synchronize_runtime() { runtime::synchronize_if_initialized(); }
void shutdown_runtime() { runtime::shutdown(); }
}  // namespace iris::capi
