// One rank's session: the process's ranks (the Host attaches them) and, once iris.init() ran, what the
// C API works on: the backend, the symmetric heap on it, the mailbox device code reports failed waits
// into, and the registry of compiled programs. One per process, as MPI and the device are.
//
// The session is the layer that puts the others together, so none of them needs another beside it:
// the heap is built on a backend, the registry on a backend and a heap, and only the session knows
// all three (docs/architecture.md).
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.hpp"
#include "session/node_layout.hpp"

namespace iris::comm {
class Comm;
}
namespace iris::heap {
class SymmetricHeap;
}
namespace iris::programs {
class Registry;
}

namespace iris::session {

struct InitOptions {
  std::string backend;    // "": IRIS_BACKEND, else auto (iris.init{backend=} names one)
  size_t heap_bytes = 0;  // 0: IRIS_HEAP_SIZE, else the backend's default
  int node_size = 0;      // 0: IRIS_NODE_SIZE, else one node per host (iris.init{node_size=})
};

class Proxy;

struct Session {
  comm::Comm& comm;
  std::unique_ptr<runtime::Backend> backend;
  std::unique_ptr<heap::SymmetricHeap> heap;
  runtime::MappedHostBuffer mailbox;              // abi::DeviceMailbox, read after faults
  std::unique_ptr<programs::Registry> programs;  // compiled programs and their kernels, made at first use
  NodeLayout nodes;                               // which ranks share a node (docs/multinode.md)
  std::unique_ptr<Proxy> proxy;                   // the host proxy; only when the job spans nodes
  // The ranks (this one included) whose kernels run on this rank's device, from what iris.init learned
  // of every rank's device (1 on the cpu backend): they share its multiprocessors (iris_device_sharing).
  int ranks_on_device = 1;

  explicit Session(comm::Comm& c);
  ~Session();
};

// The process's ranks: the Host attaches them when it starts.
void attach_comm(comm::Comm* comm);
// Throws Error(internal) when no Host attached any.
comm::Comm& comm();

// Collective. Creates the process's session, or returns the existing one (a second iris.init(); the
// Lua side decides whether its arguments conflict with the first). Every rank ends on the same
// backend, or every rank fails with the reason. Ranks on other nodes are reached through the host proxy.
Session& init(const InitOptions& options);
// The session; throws Error(invalid_argument) "call iris.init() first" before init().
Session& current();
bool initialized();
// Waits for device work; reports faults (see Backend::synchronize). Called before the ranks agree to
// end, so a fault is reported while every rank can still hear about it.
void synchronize_if_initialized();
// A device fault went up to the script (the C API raised it there, where it is printed or handled):
// the end of the job does not print it a second time.
void note_fault_reported();
bool fault_reported();
// Frees everything: peers' heaps closed, own heap freed (after every rank has finished).
void shutdown();

// The registry the C API compiles and launches with: one an embedding program or a test put in place
// (use_registry), else the session's, made at first use.
programs::Registry& registry();
// The backend that registry launches on (the session's unless one is in place), without making the
// session's registry.
runtime::Backend& backend();
// Puts `registry` in place (nullptr: back to the session's). For programs and tests that run kernels
// on a backend of their own, without iris.init().
void use_registry(programs::Registry* registry);

}  // namespace iris::session
