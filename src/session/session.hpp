// The runtime of one rank once iris.init() ran: the backend, the symmetric heap on it, the mailbox
// device code reports failed waits into, and the kernels loaded so far. The C boundary reaches it
// through runtime::current().
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.hpp"

namespace iris::comm {
class Comm;
}
namespace iris::heap {
class SymmetricHeap;
}
namespace iris::kernels {
class Registry;
}

namespace iris::runtime {

struct InitOptions {
  std::string backend;    // "": IRIS_BACKEND, else auto (iris.init{backend=} names one)
  size_t heap_bytes = 0;  // 0: IRIS_HEAP_SIZE, else the backend's default
};

// Heap size when neither iris.init{heap_size=} nor IRIS_HEAP_SIZE names one (docs/environment.md).
constexpr size_t kDefaultGpuHeapBytes = size_t(1) << 30;
constexpr size_t kDefaultCpuHeapBytes = size_t(256) << 20;

struct Runtime {
  comm::Comm& comm;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<heap::SymmetricHeap> heap;
  MappedHostBuffer mailbox;                    // abi::DeviceMailbox, read after faults
  std::unique_ptr<kernels::Registry> kernels;  // compiled modules and their kernels

  explicit Runtime(comm::Comm& c);
  ~Runtime();
};

// Collective. Creates the process's runtime, or returns the existing one (a second iris.init(); the
// Lua side decides whether its arguments conflict with the first). Every rank ends on the same
// backend, all on one node, or every rank fails with the reason.
Runtime& init(comm::Comm& comm, const InitOptions& options);
// The runtime; throws Error(invalid_argument) "call iris.init() first" before init().
Runtime& current();
bool initialized();
// Waits for device work; reports faults (see Backend::synchronize).
void synchronize_if_initialized();
// Frees everything (after every rank has finished).
void shutdown();

}  // namespace iris::runtime
