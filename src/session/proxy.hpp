// The host proxy of a job over several nodes (docs/multinode.md): one thread per rank that serves what
// this rank's device threads ask of ranks on other nodes (remote loads, stores, block transfers,
// atomics), from a ring in host-mapped memory (abi::ProxyRing, device/iris/impl/remote.hpp), with one
// of two transports (NodeTransport). It also serves the host's own transfers to those ranks
// (t:peer(r) of a rank on another node).
//
// Completion: a device thread waits for its request, and the proxy marks it done only once it has
// completed at its target (one_sided: after the flush of its target, comm/rma_window.hpp; messages:
// when the target's proxy answers, after its copy), so every remote operation has completed at its
// target when the device call returns (docs/memory.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::comm {
class Comm;
class MessageChannel;
class RmaWindow;
}  // namespace iris::comm
namespace iris::abi {
struct ProxyRing;
struct ProxySlot;
}  // namespace iris::abi
namespace iris::session {
struct RequestHeader;
}  // namespace iris::session

namespace iris::session {

// How a rank's proxy reaches the heaps of other nodes (IRIS_NODE_TRANSPORT; docs/multinode.md,
// docs/decisions.md).
enum class NodeTransport {
  // An MPI-3 window over every rank's heap (comm/rma_window.hpp): the origin's proxy puts, gets and
  // applies atomics itself. The MPI library must reach the heap's memory: any MPI on the cpu backend, a
  // CUDA- or ROCm-aware one on GPUs.
  one_sided,
  // Requests to the target's own proxy over two-sided messages (comm/message_channel.hpp), which copies
  // into and out of its heap with its backend: any MPI, GPU memory included, at the cost of a copy
  // through host memory at each end.
  messages,
};
const char* node_transport_name(NodeTransport transport);  // "one_sided", "messages"
// IRIS_NODE_TRANSPORT: the transport it names, or none for "auto" and when it is not set. Throws
// Error(environment) for another word.
std::optional<NodeTransport> node_transport_from_environment();

class Proxy {
 public:
  // Collective over every rank: opens the transport over [heap, heap + heap_bytes) and starts the thread.
  // Throws Error(environment) when MPI does not allow a second thread or the transport cannot start.
  Proxy(comm::Comm& comm, runtime::Backend& backend, void* heap, size_t heap_bytes, NodeTransport transport);
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
  // Collective between this rank and `peer` as well: `rounds` blocking MPI sends of `bytes` from host
  // memory to the peer's host memory, each answered by 8 bytes; returns the sender's median in seconds
  // (the messages transport's own figure for a block copy). `sender` says which of the two sends.
  double bulk_send(int peer, size_t bytes, int rounds, bool sender);
  // Requests served since the start, for tests and the hang report.
  uint64_t served() const { return served_.load(std::memory_order_relaxed); }
  // "MPI one-sided, osc rdma", "MPI messages, staged through host memory", ...
  std::string transport() const;
  NodeTransport kind() const { return kind_; }

  // One request sent to another rank's proxy, waiting for its answer.
  struct Outstanding {
    uint64_t ticket = 0;        // the ring slot it is (a part of), when `host_left` is null
    uint32_t slots = 1;         // a run of loads or stores: that many consecutive tickets from `ticket`
    char* into = nullptr;       // a get's piece: where the answer's bytes go (else: into the slots)
    uint64_t* host_left = nullptr;  // a host transfer's: its requests not answered yet
    uint32_t* host_status = nullptr;
  };

 private:
  void run();
  void serve(const std::vector<uint64_t>& batch);               // one_sided
  void serve_by_messages(const std::vector<uint64_t>& batch);  // messages
  bool serve_messages();  // requests of other proxies, answers to this one's: whether any came
  void answer(int source, const char* request, size_t bytes);
  void take_answer(const char* reply, size_t bytes);
  void copy_out(void* host, const void* from, size_t bytes);
  void request(int rank, uint32_t op, uint64_t offset, uint64_t bytes, const void* payload, const Outstanding& waiting,
               uint32_t type = 0, uint32_t atomic = 0);
  void request_atomics(const std::vector<uint64_t>& batch, size_t first, size_t count);
  void request_pieces(int rank, uint32_t op, uint64_t offset, char* local, uint64_t bytes, Outstanding piece);
  size_t gather_run(const std::vector<uint64_t>& batch, size_t i, char* values, uint64_t* bytes) const;
  void atomics_here(const RequestHeader& h, const char* operands, uint64_t* old);
  void finish_slot(uint64_t ticket, uint32_t status);
  void transfer_by_messages(uint32_t op, int rank, uint64_t offset, void* local, size_t bytes);
  bool outside(const abi::ProxySlot& slot) const;
  void transport_atomic(abi::ProxySlot& slot);
  void atomic16(abi::ProxySlot& slot);
  void check_range(int rank, uint64_t offset, size_t bytes) const;

  comm::Comm& comm_;
  runtime::Backend& backend_;
  void* heap_;
  size_t heap_bytes_;
  NodeTransport kind_;
  bool target_applies_atomics_ = false;  // one_sided: atomics go to the target's proxy (the cpu backend)
  int64_t awaiting_replies_ = 0;  // requests sent to other ranks' proxies, not answered yet
  std::vector<char> staging_;  // loads and stores of one batch, gathered into transfers
  runtime::MappedHostBuffer ring_buffer_;
  abi::ProxyRing* ring_ = nullptr;  // host view of the ring
  std::unique_ptr<comm::MessageChannel> channel_;
  std::unique_ptr<comm::RmaWindow> window_;  // one_sided only
  uint64_t next_request_ = 0;
  std::unordered_map<uint64_t, Outstanding> outstanding_;  // by request id
  std::unordered_map<uint64_t, uint64_t> pieces_left_;     // by ticket: a block copy's requests not answered yet
  // A copy between two ranks of other nodes (IRIS_PROXY_COPY), by ticket: its bytes in host memory,
  // got from the source, then put to the destination (messages: first its gets' answers, then its puts').
  struct Copy {
    std::vector<char> bytes;
    bool putting = false;
  };
  std::unordered_map<uint64_t, Copy> copies_;
  void start_copy_puts(uint64_t ticket);
  // The host memory every copy of the messages transport goes through, pinned (mapped host memory): a
  // copy between pageable memory and the heap would wait for the kernels in flight (the heap is
  // SYNC_MEMOPS on cuda), which may be waiting for this very proxy. `incoming_` takes every message
  // received; `bounce_` stages what leaves the heap (or any memory) on its way into a message.
  runtime::MappedHostBuffer incoming_;
  runtime::MappedHostBuffer bounce_;
  // Pinned buffers a put's piece is copied into and sent from, each busy until MPI is done with it: the
  // copy out of the GPU goes straight into the message (no pageable copy, no allocation per piece).
  struct SendBuffer {
    runtime::MappedHostBuffer memory;
    bool busy = false;
  };
  std::vector<SendBuffer> send_buffers_;
  SendBuffer& free_send_buffer();
  void answer_gets();
  struct WaitingGet {
    int source;
    uint64_t id, offset, bytes;  // the request's
  };
  std::deque<WaitingGet> waiting_gets_;  // gets whose answers wait for a send buffer (answer)
  SendBuffer* idle_send_buffer();
  std::mutex transport_;  // the thread and the host's own transfers take turns on the window
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> served_{0};
  std::thread thread_;
};

}  // namespace iris::session
