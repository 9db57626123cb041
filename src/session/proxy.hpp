// The host proxy of a job over several nodes (docs/multinode.md): one thread per rank that serves what
// this rank's device threads ask of ranks on other nodes (remote loads, stores, block transfers,
// atomics), from a ring in host-mapped memory (abi::ProxyRing, device/iris/impl/remote.hpp), with the
// transport (comm/rma_window.hpp: an MPI-3 window over every rank's heap). It also serves the host's
// own transfers to those ranks (t:peer(r) of a rank on another node).
//
// Completion: the proxy takes every posted request, issues each with the transport, completes them all
// together (one flush per target rank: comm/rma_window.hpp), and only then marks them done; a device
// thread waits for its request, so every remote operation has completed at its target when the device
// call returns (docs/memory.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::comm {
class Comm;
class RmaWindow;
}  // namespace iris::comm
namespace iris::abi {
struct ProxyRing;
struct ProxySlot;
}  // namespace iris::abi

namespace iris::session {

class Proxy {
 public:
  // Collective over every rank: opens the transport over [heap, heap + heap_bytes) and starts the thread.
  // Throws Error(environment) when MPI does not allow a second thread or the transport cannot start.
  Proxy(comm::Comm& comm, runtime::Backend& backend, void* heap, size_t heap_bytes);
  // Collective as well (the window's end): stops the thread first.
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // Where device code finds the ring (ModuleState::proxy).
  abi::ProxyRing* device_ring() const;
  // Host transfers with a rank of another node, complete on return. `local` is an address in this
  // process the transport reads or writes (host memory, or device memory where the transport reaches it).
  void put(int rank, uint64_t offset, const void* local, size_t bytes);
  void get(int rank, uint64_t offset, void* local, size_t bytes);
  // Collective between this rank and `peer` (both call it): `rounds` MPI ping-pongs of 8 bytes on the
  // transport's communicator; returns the median round trip in seconds (the reference a device-initiated
  // flag round trip is measured against).
  double ping_pong(int peer, int rounds);
  // Requests served since the start, for tests and the hang report.
  uint64_t served() const { return served_.load(std::memory_order_relaxed); }
  // "osc rdma" / "osc ucx" where MPI says.
  std::string transport() const;

 private:
  void run();
  void serve(const std::vector<uint64_t>& batch);
  bool serve_messages();  // whether any came
  bool outside(const abi::ProxySlot& slot) const;
  void transport_atomic(abi::ProxySlot& slot);
  void atomic16(abi::ProxySlot& slot);
  void check_range(int rank, uint64_t offset, size_t bytes) const;

  comm::Comm& comm_;
  runtime::Backend& backend_;
  void* heap_;
  size_t heap_bytes_;
  bool target_applies_atomics_ = false;
  int64_t awaiting_replies_ = 0;  // atomics sent to other ranks' proxies, not answered yet
  std::vector<char> staging_;  // loads and stores of one batch, gathered into transfers
  runtime::MappedHostBuffer ring_buffer_;
  abi::ProxyRing* ring_ = nullptr;  // host view of the ring
  std::unique_ptr<comm::RmaWindow> window_;
  std::mutex transport_;  // the thread and the host's own transfers take turns on the window
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> served_{0};
  std::thread thread_;
};

}  // namespace iris::session
