#include "session/proxy.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "comm/comm.hpp"
#include "comm/hang_report.hpp"
#include "comm/message_channel.hpp"
#include "comm/rma_window.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "heap/element_types.hpp"
#include "iris/impl/abi.h"

namespace iris::session {

// A request: this header, then the bytes of a store or a put, or the operands of a run of atomics
// (OperandPair each). The messages transport sends every request this way; one_sided sends atomics so
// where the target's proxy applies them.
struct RequestHeader {
  uint64_t id;      // the origin's request id (Proxy::outstanding_)
  uint64_t offset;  // in the target's heap
  uint64_t bytes;   // stored or put (they follow), loaded or got (they come back), an atomic run's operands
  uint32_t op, type, atomic, reserved;
};

namespace {

using comm::RmaWindow;

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples.empty() ? 0.0 : samples[samples.size() / 2];
}

uint64_t load_acquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void store_release(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

RmaWindow::Type atomic_type(uint32_t type) {
  switch (type) {
    case IRIS_PROXY_U32: return RmaWindow::Type::u32;
    case IRIS_PROXY_I32: return RmaWindow::Type::i32;
    case IRIS_PROXY_I64: return RmaWindow::Type::i64;
    case IRIS_PROXY_F32: return RmaWindow::Type::f32;
    case IRIS_PROXY_F64: return RmaWindow::Type::f64;
    default: return RmaWindow::Type::u64;
  }
}

// The unsigned type of the same width, for operations MPI defines on integers only (compare-and-swap
// of floats compares their bits, as the device's does; exchange moves bits).
RmaWindow::Type bits_type(uint32_t type) {
  return (type == IRIS_PROXY_U32 || type == IRIS_PROXY_I32 || type == IRIS_PROXY_F32) ? RmaWindow::Type::u32
                                                                                      : RmaWindow::Type::u64;
}

RmaWindow::Op atomic_op(uint32_t atomic) {
  switch (atomic) {
    case IRIS_PROXY_ADD: return RmaWindow::Op::sum;
    case IRIS_PROXY_XCHG: return RmaWindow::Op::replace;
    case IRIS_PROXY_AND: return RmaWindow::Op::band;
    case IRIS_PROXY_OR: return RmaWindow::Op::bor;
    case IRIS_PROXY_XOR: return RmaWindow::Op::bxor;
    case IRIS_PROXY_MIN: return RmaWindow::Op::min;
    default: return RmaWindow::Op::max;
  }
}

// The messages between the proxies (comm/message_channel.hpp), by tag.
constexpr int kTagRequest = 1;  // a request the target's proxy applies to its own heap, and its answer
constexpr int kTagReply = 2;
constexpr int kTagPing = 3;     // ping_pong
constexpr int kTagBulk = 4;     // bulk_send and its answer
constexpr int kTagBulkAck = 5;

// Its answer: this header, then the bytes of a load or a get, or a run of atomics' old values (8 bytes
// each).
struct ReplyHeader {
  uint64_t id;
  uint32_t status, reserved;
};
// An atomic's operands in a request: the value, and a compare-and-swap's compare value.
struct OperandPair {
  uint64_t value, compare;
};

// A block copy goes in requests of at most this many bytes, so that the target copies one piece into
// its heap while the next travels.
constexpr uint64_t kMessagePiece = uint64_t(4) << 20;
// The largest message: a piece and its header.
constexpr size_t kMessageBytes = kMessagePiece + 64;
uint64_t piece_count(uint64_t bytes) { return (bytes + kMessagePiece - 1) / kMessagePiece; }
// Puts' pieces in flight at once from one proxy (Proxy::send_buffers_): enough to keep the transport
// busy while the next piece is copied out of the GPU.
constexpr size_t kSendBuffers = 4;
static_assert(sizeof(RequestHeader) <= 64 && sizeof(ReplyHeader) <= 64, "a header fits kMessageBytes' room");

}  // namespace

const char* node_transport_name(NodeTransport transport) {
  return transport == NodeTransport::messages ? "messages" : "one_sided";
}

std::optional<NodeTransport> node_transport_from_environment() {
  const std::optional<std::string> word = env::get(env::Var::node_transport);
  if (!word || word->empty() || *word == "auto") return std::nullopt;
  if (*word == "one_sided") return NodeTransport::one_sided;
  if (*word == "messages") return NodeTransport::messages;
  throw Error(Errc::environment, format("IRIS_NODE_TRANSPORT must be auto, one_sided or messages, got '%s'",
                                        word->c_str()));
}

Proxy::Proxy(comm::Comm& comm, runtime::Backend& backend, void* heap, size_t heap_bytes, NodeTransport transport)
    : comm_(comm), backend_(backend), heap_(heap), heap_bytes_(heap_bytes), kind_(transport) {
  if (!comm.threads_may_call_mpi()) {
    throw Error(Errc::environment,
                "ranks on several nodes need the host proxy, a thread that calls MPI beside the main thread, but MPI "
                "gave only " + comm.thread_level_name() + " (not MPI_THREAD_MULTIPLE): use an MPI library built with "
                "thread support (Open MPI's is) and let iris-lua initialize MPI");
  }
  channel_ = std::make_unique<comm::MessageChannel>(comm);
  if (kind_ == NodeTransport::one_sided) {
    window_ = RmaWindow::create(comm, heap, heap_bytes);
    // Where the host can apply atomics to its own heap (the cpu backend), the target's proxy applies the
    // atomics other nodes send: MPI's accumulates are atomic only among themselves, not with the device's
    // own atomics on the same word (docs/decisions.md).
    target_applies_atomics_ = backend.host_addressable();
  }
  incoming_ = backend.allocate_mapped_host(kMessageBytes);
  if (kind_ == NodeTransport::messages) {  // (one_sided moves no bytes through the proxies' own buffers)
    bounce_ = backend.allocate_mapped_host(kMessageBytes);
    send_buffers_.resize(kSendBuffers);
    for (SendBuffer& b : send_buffers_) b.memory = backend.allocate_mapped_host(kMessageBytes);
  }
  ring_buffer_ = backend.allocate_mapped_host(sizeof(abi::ProxyRing));
  ring_ = static_cast<abi::ProxyRing*>(ring_buffer_.host);
  std::memset(static_cast<void*>(ring_), 0, sizeof(abi::ProxyRing));
  for (uint64_t i = 0; i < IRIS_PROXY_RING_SLOTS; ++i) ring_->slots[i].seq = i;
  thread_ = std::thread([this] { run(); });
}

Proxy::~Proxy() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  window_.reset();
  channel_.reset();
  for (runtime::MappedHostBuffer* b : {&incoming_, &bounce_}) {
    if (b->host != nullptr) backend_.free_mapped_host(*b);
  }
  for (SendBuffer& b : send_buffers_) {
    if (b.memory.host != nullptr) backend_.free_mapped_host(b.memory);
  }
  if (ring_buffer_.host != nullptr) backend_.free_mapped_host(ring_buffer_);
}

abi::ProxyRing* Proxy::device_ring() const { return static_cast<abi::ProxyRing*>(ring_buffer_.device); }

std::string Proxy::transport() const {
  if (kind_ == NodeTransport::messages) return "MPI messages to the target's proxy, staged through host memory";
  return window_->component().empty() ? "MPI one-sided" : "MPI one-sided, " + window_->component();
}

void Proxy::check_range(int rank, uint64_t offset, size_t bytes) const {
  if (rank < 0 || rank >= comm_.size() || offset > heap_bytes_ || bytes > heap_bytes_ - offset) {
    throw Error(Errc::invalid_argument, format("a transfer of %zu bytes at heap offset %llu of rank %d lies outside "
                                               "its heap (%zu bytes)",
                                               bytes, static_cast<unsigned long long>(offset), rank, heap_bytes_));
  }
}

void Proxy::put(int rank, uint64_t offset, const void* local, size_t bytes) {
  check_range(rank, offset, bytes);
  std::lock_guard<std::mutex> lock(transport_);
  if (kind_ == NodeTransport::messages) return transfer_by_messages(IRIS_PROXY_PUT, rank, offset, const_cast<void*>(local), bytes);
  window_->put(local, bytes, rank, offset);
  window_->flush_all();
}

void Proxy::get(int rank, uint64_t offset, void* local, size_t bytes) {
  check_range(rank, offset, bytes);
  std::lock_guard<std::mutex> lock(transport_);
  if (kind_ == NodeTransport::messages) return transfer_by_messages(IRIS_PROXY_GET, rank, offset, local, bytes);
  window_->get(local, bytes, rank, offset);
  window_->flush_all();
}

namespace {


template <class T>
T bits_as(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
template <class T>
uint64_t as_bits(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

// *p = op(*p) by compare-and-swap on the bits of a W-byte word: returns the old bits.
template <class W, class Op>
uint64_t cas_loop(void* p, Op op) {
  W* word = static_cast<W*>(p);
  W old = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    const W desired = static_cast<W>(op(static_cast<uint64_t>(old)));
    if (__atomic_compare_exchange_n(word, &old, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      return static_cast<uint64_t>(old);
    }
  }
}

// The value of an atomic's type as a double, and back, for the arithmetic of min, max and float adds.
double value_of(uint32_t type, uint64_t bits) {
  switch (type) {
    case IRIS_PROXY_I32: return bits_as<int32_t>(bits);
    case IRIS_PROXY_U32: return bits_as<uint32_t>(bits);
    case IRIS_PROXY_F32: return bits_as<float>(bits);
    case IRIS_PROXY_F64: return bits_as<double>(bits);
    case IRIS_PROXY_HALF: return heap::float16_to_double(static_cast<uint16_t>(bits));
    case IRIS_PROXY_BFLOAT16: return heap::bfloat16_to_double(static_cast<uint16_t>(bits));
    default: return 0;
  }
}

// Applies an atomic to this rank's own heap with the host's atomics, which are atomic with the
// device's own (the cpu backend's kernels use the same instructions): returns the old bits.
uint64_t apply_atomic(void* p, uint32_t type, uint32_t atomic, uint64_t value, uint64_t compare) {
  const bool is64 = type == IRIS_PROXY_U64 || type == IRIS_PROXY_I64 || type == IRIS_PROXY_F64;
  const bool is16 = type == IRIS_PROXY_HALF || type == IRIS_PROXY_BFLOAT16;
  const bool integer = !is16 && type != IRIS_PROXY_F32 && type != IRIS_PROXY_F64;
  const bool is_signed = type == IRIS_PROXY_I32 || type == IRIS_PROXY_I64;
  if (atomic == IRIS_PROXY_CAS) {
    if (is64) {
      uint64_t expected = compare;
      __atomic_compare_exchange_n(static_cast<uint64_t*>(p), &expected, value, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
      return expected;
    }
    uint32_t expected = static_cast<uint32_t>(compare);
    __atomic_compare_exchange_n(static_cast<uint32_t*>(p), &expected, static_cast<uint32_t>(value), false,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
  }
  if (integer && atomic != IRIS_PROXY_MIN && atomic != IRIS_PROXY_MAX) {
    if (is64) {
      auto* q = static_cast<uint64_t*>(p);
      switch (atomic) {
        case IRIS_PROXY_ADD: return __atomic_fetch_add(q, value, __ATOMIC_ACQ_REL);
        case IRIS_PROXY_XCHG: return __atomic_exchange_n(q, value, __ATOMIC_ACQ_REL);
        case IRIS_PROXY_AND: return __atomic_fetch_and(q, value, __ATOMIC_ACQ_REL);
        case IRIS_PROXY_OR: return __atomic_fetch_or(q, value, __ATOMIC_ACQ_REL);
        default: return __atomic_fetch_xor(q, value, __ATOMIC_ACQ_REL);
      }
    }
    auto* q = static_cast<uint32_t*>(p);
    const auto v = static_cast<uint32_t>(value);
    switch (atomic) {
      case IRIS_PROXY_ADD: return __atomic_fetch_add(q, v, __ATOMIC_ACQ_REL);
      case IRIS_PROXY_XCHG: return __atomic_exchange_n(q, v, __ATOMIC_ACQ_REL);
      case IRIS_PROXY_AND: return __atomic_fetch_and(q, v, __ATOMIC_ACQ_REL);
      case IRIS_PROXY_OR: return __atomic_fetch_or(q, v, __ATOMIC_ACQ_REL);
      default: return __atomic_fetch_xor(q, v, __ATOMIC_ACQ_REL);
    }
  }
  if (atomic == IRIS_PROXY_XCHG) {
    return is64 ? __atomic_exchange_n(static_cast<uint64_t*>(p), value, __ATOMIC_ACQ_REL)
                : __atomic_exchange_n(static_cast<uint32_t*>(p), static_cast<uint32_t>(value), __ATOMIC_ACQ_REL);
  }
  // min and max of any type, adds of floats: computed on the old value, swapped in by compare-and-swap.
  const auto next = [&](uint64_t old) -> uint64_t {
    if (integer) {  // min/max of integers, compared in their own type
      if (is64 && is_signed) {
        const int64_t a = bits_as<int64_t>(old), b = bits_as<int64_t>(value);
        return (atomic == IRIS_PROXY_MAX ? a < b : b < a) ? value : old;
      }
      if (is64) return (atomic == IRIS_PROXY_MAX ? old < value : value < old) ? value : old;
      const double a = value_of(type, old), b = value_of(type, value);
      return (atomic == IRIS_PROXY_MAX ? a < b : b < a) ? value : old;
    }
    const double a = value_of(type, old), b = value_of(type, value);
    if (atomic == IRIS_PROXY_MIN || atomic == IRIS_PROXY_MAX) return (atomic == IRIS_PROXY_MAX ? a < b : b < a) ? value : old;
    // Adds in the type's own precision, as the device does (atomics.hpp).
    switch (type) {
      case IRIS_PROXY_F32: return as_bits(bits_as<float>(old) + bits_as<float>(value));
      case IRIS_PROXY_F64: return as_bits(bits_as<double>(old) + bits_as<double>(value));
      case IRIS_PROXY_HALF: return heap::float16_from_double(static_cast<float>(a) + static_cast<float>(b));
      default: return heap::bfloat16_from_double(static_cast<float>(a) + static_cast<float>(b));
    }
  };
  if (is16) return cas_loop<uint16_t>(p, next);
  return is64 ? cas_loop<uint64_t>(p, next) : cas_loop<uint32_t>(p, next);
}

size_t atomic_bytes(uint32_t type) {
  if (type == IRIS_PROXY_HALF || type == IRIS_PROXY_BFLOAT16) return 2;
  return type == IRIS_PROXY_U32 || type == IRIS_PROXY_I32 || type == IRIS_PROXY_F32 ? 4 : 8;
}

}  // namespace

double Proxy::ping_pong(int peer, int rounds) {
  const bool first = comm_.rank() < peer;
  std::vector<double> trips;
  uint64_t token = 0;
  const auto exchange = [&](bool send) {
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(transport_);
        if (send) {
          channel_->send(peer, kTagPing, &token, sizeof token);
          return;
        }
        int source = 0;
        if (channel_->receive(kTagPing, &source, &token, sizeof token)) return;
      }
      if (std::chrono::steady_clock::now() - started > std::chrono::seconds(30)) {
        throw Error(Errc::environment, format("MPI ping-pong: rank %d did not answer in 30 s", peer));
      }
    }
  };
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (first) {
      exchange(true);
      exchange(false);
    } else {
      exchange(false);
      exchange(true);
    }
    trips.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(std::move(trips));
}

double Proxy::bulk_send(int peer, size_t bytes, int rounds, bool sender) {
  std::vector<char> buffer(bytes, 1);
  uint64_t ack = 0;
  std::vector<double> times;
  std::lock_guard<std::mutex> lock(transport_);
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (sender) {
      channel_->send_blocking(peer, kTagBulk, buffer.data(), bytes);
      channel_->receive_blocking(peer, kTagBulkAck, &ack, sizeof ack);
    } else {
      channel_->receive_blocking(peer, kTagBulk, buffer.data(), bytes);
      channel_->send_blocking(peer, kTagBulkAck, &ack, sizeof ack);
    }
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(std::move(times));
}

// Atomics on 2-byte floats through the transport: MPI has no such type, so a compare-and-swap loop on
// the bits, computed in float as the device does (atomics.hpp: add16).
void Proxy::atomic16(abi::ProxySlot& slot) {
  const bool half = slot.type == IRIS_PROXY_HALF;
  const auto to_double = [half](uint16_t bits) { return half ? heap::float16_to_double(bits) : heap::bfloat16_to_double(bits); };
  const auto from_double = [half](double v) { return half ? heap::float16_from_double(v) : heap::bfloat16_from_double(v); };
  uint16_t operand = 0;
  std::memcpy(&operand, &slot.value[0], 2);
  uint16_t old = 0, zero = 0;
  window_->fetch_and_op(&zero, &old, RmaWindow::Type::u16, RmaWindow::Op::no_op, slot.rank, slot.offset);
  window_->flush_all();
  for (;;) {
    const float sum = static_cast<float>(to_double(old)) + static_cast<float>(to_double(operand));
    const uint16_t desired = from_double(static_cast<double>(sum));
    uint16_t seen = 0;
    window_->compare_and_swap(&desired, &old, &seen, RmaWindow::Type::u16, slot.rank, slot.offset);
    window_->flush_all();
    if (seen == old) break;
    old = seen;
  }
  slot.value[0] = 0;
  std::memcpy(&slot.value[0], &old, 2);
}

bool Proxy::outside(const abi::ProxySlot& slot) const {
  const uint64_t bytes = slot.op == IRIS_PROXY_ATOMIC ? atomic_bytes(slot.type) : slot.bytes;
  const auto outside_heap = [&](int64_t rank, uint64_t offset) {
    return rank < 0 || rank >= comm_.size() || offset > heap_bytes_ || bytes > heap_bytes_ - offset;
  };
  if (slot.op == IRIS_PROXY_COPY && outside_heap(static_cast<int64_t>(slot.value[0]), slot.value[1])) return true;
  return outside_heap(slot.rank, slot.offset);
}

// An atomic through the transport's own atomics (where the target's proxy does not apply them).
void Proxy::transport_atomic(abi::ProxySlot& slot) {
  if (slot.type == IRIS_PROXY_HALF || slot.type == IRIS_PROXY_BFLOAT16) return atomic16(slot);
  if (slot.atomic == IRIS_PROXY_CAS) {
    const uint64_t desired = slot.value[0], compare = slot.value[1];
    window_->compare_and_swap(&desired, &compare, slot.value, bits_type(slot.type), slot.rank, slot.offset);
  } else {
    const uint64_t operand = slot.value[0];
    const RmaWindow::Type type = slot.atomic == IRIS_PROXY_XCHG ? bits_type(slot.type) : atomic_type(slot.type);
    window_->fetch_and_op(&operand, slot.value, type, atomic_op(slot.atomic), slot.rank, slot.offset);
  }
}

// The run of loads or stores that starts at batch[i]: the slots after it with the same operation on the
// next bytes of the same rank (a block's threads on consecutive elements), which travel as one transfer.
// Copies the run's values into `values`; *bytes = the run's length. Returns one past its last slot.
size_t Proxy::gather_run(const std::vector<uint64_t>& batch, size_t i, char* values, uint64_t* bytes) const {
  const abi::ProxySlot& slot = ring_->slots[batch[i] % IRIS_PROXY_RING_SLOTS];
  uint64_t end = slot.offset + slot.bytes;
  std::memcpy(values, slot.value, slot.bytes);
  size_t j = i + 1;
  for (; j < batch.size(); ++j) {
    const abi::ProxySlot& next = ring_->slots[batch[j] % IRIS_PROXY_RING_SLOTS];
    if (next.op != slot.op || next.rank != slot.rank || next.offset != end || outside(next)) break;
    std::memcpy(values + (end - slot.offset), next.value, next.bytes);
    end += next.bytes;
  }
  *bytes = end - slot.offset;
  return j;
}

// Issues the batch's requests with the transport, then completes them (one flush per target). Loads and
// stores of consecutive addresses of one rank (a block's threads on consecutive elements) travel as one
// transfer. Atomics the target's proxy applies are sent to it and complete when its answer comes.
void Proxy::serve(const std::vector<uint64_t>& batch) {
  struct Loaded {
    size_t first, count, at;
  };
  std::vector<Loaded> loads;
  std::vector<size_t> copies;  // batch indexes of copies between two other ranks: got first, put after the flush
  staging_.resize(batch.size() * 16);
  size_t at = 0;
  std::vector<char> done(batch.size(), 1);
  for (size_t i = 0; i < batch.size();) {
    abi::ProxySlot& slot = ring_->slots[batch[i] % IRIS_PROXY_RING_SLOTS];
    if (outside(slot)) {
      slot.status = IRIS_PROXY_STATUS_OUTSIDE;
      ++i;
      continue;
    }
    if (slot.op == IRIS_PROXY_LOAD || slot.op == IRIS_PROXY_STORE) {
      char* run = staging_.data() + at;
      uint64_t bytes = 0;
      const size_t j = gather_run(batch, i, run, &bytes);
      if (slot.op == IRIS_PROXY_STORE) {
        window_->put(run, bytes, slot.rank, slot.offset);
      } else {
        window_->get(run, bytes, slot.rank, slot.offset);
        loads.push_back({i, j - i, at});
      }
      at += bytes;
      i = j;
      continue;
    }
    void* local = reinterpret_cast<void*>(static_cast<uintptr_t>(slot.local));
    if (slot.op == IRIS_PROXY_PUT) {
      window_->put(local, slot.bytes, slot.rank, slot.offset);
    } else if (slot.op == IRIS_PROXY_GET) {
      window_->get(local, slot.bytes, slot.rank, slot.offset);
    } else if (slot.op == IRIS_PROXY_COPY) {
      std::vector<char>& bytes = copies_[batch[i]].bytes;
      bytes.resize(slot.bytes);
      window_->get(bytes.data(), slot.bytes, static_cast<int>(slot.value[0]), slot.value[1]);
      copies.push_back(i);
    } else if (target_applies_atomics_) {
      request_atomics(batch, i, 1);
      done[i] = 0;  // complete when the answer comes
    } else {
      transport_atomic(slot);
    }
    ++i;
  }
  window_->flush_all();
  if (!copies.empty()) {  // every get has landed: the puts of the copies, completed by a second flush
    for (size_t i : copies) {
      const abi::ProxySlot& slot = ring_->slots[batch[i] % IRIS_PROXY_RING_SLOTS];
      window_->put(copies_[batch[i]].bytes.data(), slot.bytes, slot.rank, slot.offset);
    }
    window_->flush_all();
    for (size_t i : copies) copies_.erase(batch[i]);
  }
  for (const Loaded& l : loads) {
    const char* from = staging_.data() + l.at;
    for (size_t k = l.first; k < l.first + l.count; ++k) {
      abi::ProxySlot& slot = ring_->slots[batch[k] % IRIS_PROXY_RING_SLOTS];
      std::memcpy(slot.value, from, slot.bytes);
      from += slot.bytes;
    }
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (done[i]) store_release(&ring_->slots[batch[i] % IRIS_PROXY_RING_SLOTS].seq, batch[i] + 2);
  }
}

// The messages transport, at the origin: each request goes to its target's proxy, and completes when
// the answer comes (take_answer). Loads and stores of consecutive addresses of one rank travel as one
// request, as with one_sided; a block copy as pieces of kMessagePiece.
void Proxy::serve_by_messages(const std::vector<uint64_t>& batch) {
  for (size_t i = 0; i < batch.size();) {
    abi::ProxySlot& slot = ring_->slots[batch[i] % IRIS_PROXY_RING_SLOTS];
    if (outside(slot)) {
      finish_slot(batch[i], IRIS_PROXY_STATUS_OUTSIDE);
      ++i;
      continue;
    }
    if (slot.op == IRIS_PROXY_LOAD || slot.op == IRIS_PROXY_STORE) {
      staging_.resize(batch.size() * 16);
      uint64_t bytes = 0;
      const size_t j = gather_run(batch, i, staging_.data(), &bytes);
      Outstanding run;
      run.ticket = batch[i];
      run.slots = static_cast<uint32_t>(j - i);
      request(slot.rank, slot.op, slot.offset, bytes, staging_.data(), run);
      i = j;
      continue;
    }
    if (slot.op == IRIS_PROXY_PUT || slot.op == IRIS_PROXY_GET || slot.op == IRIS_PROXY_COPY) {
      char* local = reinterpret_cast<char*>(static_cast<uintptr_t>(slot.local));
      if (slot.bytes == 0) {
        finish_slot(batch[i], IRIS_PROXY_STATUS_OK);
      } else {
        pieces_left_[batch[i]] = piece_count(slot.bytes);
        Outstanding piece;
        piece.ticket = batch[i];
        if (slot.op == IRIS_PROXY_COPY) {  // the gets from the source first (take_answer: then the puts)
          std::vector<char>& bytes = copies_[batch[i]].bytes;
          bytes.resize(slot.bytes);
          request_pieces(static_cast<int>(slot.value[0]), IRIS_PROXY_GET, slot.value[1], bytes.data(), slot.bytes, piece);
        } else {
          request_pieces(slot.rank, slot.op, slot.offset, local, slot.bytes, piece);
        }
      }
    } else {  // atomics: a run of the same operation on consecutive words of one rank goes as one request
      const size_t width = atomic_bytes(slot.type);
      size_t j = i + 1;
      while (j < batch.size()) {
        const abi::ProxySlot& next = ring_->slots[batch[j] % IRIS_PROXY_RING_SLOTS];
        if (next.op != IRIS_PROXY_ATOMIC || next.rank != slot.rank || next.type != slot.type ||
            next.atomic != slot.atomic || next.offset != slot.offset + (j - i) * width || outside(next)) {
          break;
        }
        ++j;
      }
      request_atomics(batch, i, j - i);
      i = j;
      continue;
    }
    ++i;
  }
}

// A block copy of `bytes` between `local` and (rank, offset), as requests of at most kMessagePiece that
// each complete `piece` (a get's answers go into `local`, piece by piece). The caller has set its count
// of pieces (piece_count) first: an answer may come while later pieces are still being sent.
void Proxy::request_pieces(int rank, uint32_t op, uint64_t offset, char* local, uint64_t bytes, Outstanding piece) {
  for (uint64_t done = 0; done < bytes; done += kMessagePiece) {
    if (op == IRIS_PROXY_GET) piece.into = local + done;
    request(rank, op, offset + done, std::min(kMessagePiece, bytes - done), local + done, piece);
  }
}

// The atomics of slots batch[first, first + count): the same operation and type on consecutive words of
// one rank, applied by that rank's proxy.
void Proxy::request_atomics(const std::vector<uint64_t>& batch, size_t first, size_t count) {
  const abi::ProxySlot& slot = ring_->slots[batch[first] % IRIS_PROXY_RING_SLOTS];
  std::vector<OperandPair> operands(count);
  for (size_t k = 0; k < count; ++k) {
    const abi::ProxySlot& s = ring_->slots[batch[first + k] % IRIS_PROXY_RING_SLOTS];
    operands[k] = {s.value[0], s.value[1]};
  }
  Outstanding run;
  run.ticket = batch[first];
  run.slots = static_cast<uint32_t>(count);
  request(slot.rank, IRIS_PROXY_ATOMIC, slot.offset, count * sizeof(OperandPair), operands.data(), run, slot.type,
          slot.atomic);
}

// Sends one request to `rank`'s proxy; `waiting` says what its answer completes. A store's or put's
// bytes travel with it: `payload` may be device memory (a put_block's source), which the backend copies.
void Proxy::request(int rank, uint32_t op, uint64_t offset, uint64_t bytes, const void* payload,
                    const Outstanding& waiting, uint32_t type, uint32_t atomic) {
  const RequestHeader header{next_request_, offset, bytes, op, type, atomic, 0};
  outstanding_.emplace(next_request_++, waiting);
  ++awaiting_replies_;
  if (op == IRIS_PROXY_PUT) {  // straight from the GPU (or any memory) into a pinned buffer, sent from there
    SendBuffer& buffer = free_send_buffer();
    char* message = static_cast<char*>(buffer.memory.host);
    std::memcpy(message, &header, sizeof header);
    backend_.proxy_copy(message + sizeof header, payload, bytes);
    return channel_->send_borrowed(rank, kTagRequest, message, sizeof header + bytes, &buffer.busy);
  }
  const bool carries = op == IRIS_PROXY_STORE || op == IRIS_PROXY_ATOMIC;
  std::vector<char> message(sizeof header + (carries ? bytes : 0));
  std::memcpy(message.data(), &header, sizeof header);
  if (carries) std::memcpy(message.data() + sizeof header, payload, bytes);  // host memory: gathered from the slots
  channel_->send(rank, kTagRequest, std::move(message));
}

// A send buffer MPI is done with, if there is one now (an answer never waits for one: see below).
Proxy::SendBuffer* Proxy::idle_send_buffer() {
  for (SendBuffer& b : send_buffers_) {
    if (!b.busy) return &b;
  }
  return nullptr;
}

// A send buffer MPI is done with. While all are in flight this thread keeps answering other proxies'
// requests (which never wait for a send buffer), so the sends it waits for can complete.
Proxy::SendBuffer& Proxy::free_send_buffer() {
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    if (SendBuffer* b = idle_send_buffer()) return *b;
    channel_->progress();
    serve_messages();
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(60)) {
      throw Error(Errc::environment, "the proxies of other nodes took none of this rank's messages for 60 s: is every "
                                     "rank alive? (docs/multinode.md)");
    }
  }
}

// Copies `bytes` from any memory (the heap, a put_block's source, host memory) into pageable host memory,
// through the pinned bounce buffer (Proxy::bounce_ says why; the cpu backend takes the same path, so CI
// runs it).
void Proxy::copy_out(void* host, const void* from, size_t bytes) {
  backend_.proxy_copy(bounce_.host, from, bytes);
  std::memcpy(host, bounce_.host, bytes);
}

// At the target: applies another proxy's request (received into incoming_, pinned) to this rank's own
// heap and answers it.
void Proxy::answer(int source, const char* message, size_t size) {
  RequestHeader h{};
  std::memcpy(&h, message, std::min(sizeof h, size));
  ReplyHeader reply{h.id, IRIS_PROXY_STATUS_OK, 0};
  std::vector<char> answer(sizeof reply);
  const bool carries = h.op == IRIS_PROXY_STORE || h.op == IRIS_PROXY_PUT || h.op == IRIS_PROXY_ATOMIC;
  const uint64_t atomics = h.op == IRIS_PROXY_ATOMIC ? h.bytes / sizeof(OperandPair) : 0;
  const uint64_t bytes = h.op == IRIS_PROXY_ATOMIC ? atomics * atomic_bytes(h.type) : h.bytes;
  if (size < sizeof h || h.offset > heap_bytes_ || bytes > heap_bytes_ - h.offset || bytes > kMessagePiece ||
      (carries && size != sizeof h + h.bytes)) {
    reply.status = IRIS_PROXY_STATUS_OUTSIDE;
  } else {
    char* at = static_cast<char*>(heap_) + h.offset;
    try {
      if (h.op == IRIS_PROXY_ATOMIC) {
        answer.resize(sizeof reply + atomics * sizeof(uint64_t));
        std::vector<uint64_t> old(atomics);
        atomics_here(h, message + sizeof h, old.data());
        std::memcpy(answer.data() + sizeof reply, old.data(), atomics * sizeof(uint64_t));
      } else if (carries) {
        backend_.proxy_copy(at, message + sizeof h, h.bytes);
      } else if (h.op == IRIS_PROXY_GET && !send_buffers_.empty()) {
        // Straight from the heap into a pinned buffer, sent from there; while every buffer is on its way,
        // the answer waits its turn (answer_gets) and this proxy goes on serving. Requests that are in
        // flight together come from different device threads (each waits for its own), so their order
        // is free. (A load's few bytes: below.)
        waiting_gets_.push_back({source, h.id, h.offset, h.bytes});
        return answer_gets();
      } else {
        answer.resize(sizeof reply + h.bytes);
        copy_out(answer.data() + sizeof reply, at, h.bytes);
      }
    } catch (const std::exception& e) {
      log::write(log::Level::error, format("rank %d's request at heap offset %llu failed here: %s", source,
                                           static_cast<unsigned long long>(h.offset), e.what()));
      reply.status = IRIS_PROXY_STATUS_FAILED;
      answer.resize(sizeof reply);
    }
  }
  std::memcpy(answer.data(), &reply, sizeof reply);
  channel_->send(source, kTagReply, std::move(answer));
}

// A run of atomics on consecutive words of this rank's own heap for another node; `old` takes each
// word's old value. The cpu backend applies them with the host's atomics, atomic with its kernels' own.
// A GPU's heap the host cannot address: the words are read, changed and written back with the backend's
// copies (through bounce_, pinned), atomic with every other node's atomics on them (this proxy applies
// them all, one request at a time) but not with this GPU's own (the rule of the one_sided transport's
// GPU atomics, and NVSHMEM's over InfiniBand: docs/multinode.md). Only the run's words are written back.
void Proxy::atomics_here(const RequestHeader& h, const char* operands, uint64_t* old) {
  const size_t width = atomic_bytes(h.type);
  const uint64_t count = h.bytes / sizeof(OperandPair);
  char* at = static_cast<char*>(heap_) + h.offset;
  char* words = backend_.host_addressable() ? at : static_cast<char*>(bounce_.host);
  if (words != at) backend_.proxy_copy(words, at, count * width);
  for (uint64_t k = 0; k < count; ++k) {
    OperandPair pair;
    std::memcpy(&pair, operands + k * sizeof pair, sizeof pair);
    old[k] = apply_atomic(words + k * width, h.type, h.atomic, pair.value, pair.compare);
  }
  if (words != at) backend_.proxy_copy(at, words, count * width);
}

// The gets waiting for a send buffer (answer), as far as buffers are idle.
void Proxy::answer_gets() {
  while (!waiting_gets_.empty()) {
    SendBuffer* buffer = idle_send_buffer();
    if (buffer == nullptr) return;
    const WaitingGet get = waiting_gets_.front();
    waiting_gets_.pop_front();
    ReplyHeader reply{get.id, IRIS_PROXY_STATUS_OK, 0};
    char* out = static_cast<char*>(buffer->memory.host);
    try {
      backend_.proxy_copy(out + sizeof reply, static_cast<char*>(heap_) + get.offset, get.bytes);
    } catch (const std::exception& e) {
      log::write(log::Level::error, format("rank %d's get at heap offset %llu failed here: %s", get.source,
                                           static_cast<unsigned long long>(get.offset), e.what()));
      reply.status = IRIS_PROXY_STATUS_FAILED;
      channel_->send(get.source, kTagReply, &reply, sizeof reply);
      continue;
    }
    std::memcpy(out, &reply, sizeof reply);
    channel_->send_borrowed(get.source, kTagReply, out, sizeof reply + get.bytes, &buffer->busy);
  }
}

void Proxy::finish_slot(uint64_t ticket, uint32_t status) {
  abi::ProxySlot& slot = ring_->slots[ticket % IRIS_PROXY_RING_SLOTS];
  if (status != IRIS_PROXY_STATUS_OK) slot.status = status;
  store_release(&slot.seq, ticket + 2);
}

// At the origin: the answer to one of this proxy's requests completes what waited for it.
void Proxy::take_answer(const char* message, size_t size) {
  ReplyHeader reply{};
  std::memcpy(&reply, message, std::min(sizeof reply, size));
  const auto it = outstanding_.find(reply.id);
  if (size < sizeof reply || it == outstanding_.end()) return;  // a request given up (transfer_by_messages)
  const Outstanding waiting = it->second;
  outstanding_.erase(it);
  --awaiting_replies_;
  const char* data = message + sizeof reply;  // in incoming_, pinned: copied straight to where it goes
  const size_t bytes = size - sizeof reply;
  if (waiting.host_left != nullptr) {
    if (reply.status != IRIS_PROXY_STATUS_OK) *waiting.host_status = reply.status;
    if (waiting.into != nullptr && reply.status == IRIS_PROXY_STATUS_OK) backend_.proxy_copy(waiting.into, data, bytes);
    --*waiting.host_left;
    return;
  }
  abi::ProxySlot& slot = ring_->slots[waiting.ticket % IRIS_PROXY_RING_SLOTS];
  switch (slot.op) {
    case IRIS_PROXY_PUT:
    case IRIS_PROXY_GET:
    case IRIS_PROXY_COPY: {
      if (reply.status != IRIS_PROXY_STATUS_OK) slot.status = reply.status;
      if (waiting.into != nullptr && reply.status == IRIS_PROXY_STATUS_OK) backend_.proxy_copy(waiting.into, data, bytes);
      const auto left = pieces_left_.find(waiting.ticket);
      if (left != pieces_left_.end() && --left->second > 0) return;
      if (left != pieces_left_.end()) pieces_left_.erase(left);
      const auto copy = copies_.find(waiting.ticket);
      if (copy != copies_.end() && !copy->second.putting && slot.status == IRIS_PROXY_STATUS_OK) {
        return start_copy_puts(waiting.ticket);  // (this message's bytes are used up: the puts may reuse incoming_)
      }
      if (copy != copies_.end()) copies_.erase(copy);
      return finish_slot(waiting.ticket, IRIS_PROXY_STATUS_OK);
    }
    default:  // a run of loads, stores or atomics
      for (uint64_t t = waiting.ticket; t < waiting.ticket + waiting.slots; ++t) {
        abi::ProxySlot& s = ring_->slots[t % IRIS_PROXY_RING_SLOTS];
        const size_t result = s.op == IRIS_PROXY_LOAD ? s.bytes : s.op == IRIS_PROXY_ATOMIC ? sizeof(uint64_t) : 0;
        if (result > 0 && reply.status == IRIS_PROXY_STATUS_OK && static_cast<size_t>(message + size - data) >= result) {
          if (s.op == IRIS_PROXY_ATOMIC) s.value[0] = 0;
          std::memcpy(s.value, data, result);
          data += result;
        }
        finish_slot(t, reply.status);
      }
  }
}

// A copy between two ranks of other nodes whose gets have all been answered: its puts to the
// destination, which complete the slot (take_answer).
void Proxy::start_copy_puts(uint64_t ticket) {
  const abi::ProxySlot& slot = ring_->slots[ticket % IRIS_PROXY_RING_SLOTS];
  Copy& copy = copies_[ticket];
  copy.putting = true;
  pieces_left_[ticket] = piece_count(slot.bytes);
  Outstanding piece;
  piece.ticket = ticket;
  request_pieces(slot.rank, IRIS_PROXY_PUT, slot.offset, copy.bytes.data(), slot.bytes, piece);
}

// Requests other ranks' proxies sent to this rank's heap, and the answers to this proxy's own.
bool Proxy::serve_messages() {
  bool served = false;
  int source = 0;
  size_t bytes = 0;
  char* in = static_cast<char*>(incoming_.host);
  while (channel_->receive(kTagRequest, &source, in, kMessageBytes, &bytes)) {
    served = true;
    answer(source, in, bytes);
  }
  while (channel_->receive(kTagReply, &source, in, kMessageBytes, &bytes)) {
    served = true;
    take_answer(in, bytes);
  }
  if (!waiting_gets_.empty()) {
    channel_->progress();  // frees the send buffers MPI is done with
    const size_t waiting = waiting_gets_.size();
    answer_gets();
    served = served || waiting_gets_.size() < waiting;
  }
  return served;
}

// A host transfer (put, get) with the messages transport, on the calling thread, which holds the
// transport: its pieces go out, then this thread serves every message (other proxies' requests too, so
// that two ranks copying to each other at once both finish) until its own are answered.
void Proxy::transfer_by_messages(uint32_t op, int rank, uint64_t offset, void* local, size_t bytes) {
  uint64_t left = 0;
  uint32_t status = IRIS_PROXY_STATUS_OK;
  struct GiveUp {  // on the way out by an error: later answers find nothing to complete
    Proxy& proxy;
    uint64_t* left;
    ~GiveUp() {
      if (*left == 0) return;
      for (auto it = proxy.outstanding_.begin(); it != proxy.outstanding_.end();) {
        if (it->second.host_left == left) {
          it = proxy.outstanding_.erase(it);
          --proxy.awaiting_replies_;
        } else {
          ++it;
        }
      }
    }
  } give_up{*this, &left};
  Outstanding piece;
  piece.slots = 0;
  piece.host_left = &left;
  piece.host_status = &status;
  left = piece_count(bytes);
  request_pieces(rank, op, offset, static_cast<char*>(local), bytes, piece);
  const std::string doing = format("waiting for rank %d's host proxy (a host copy across nodes)", rank);
  comm::hang::Wait wait(doing);
  while (left > 0) {
    if (serve_messages()) continue;
    channel_->progress();
    interrupt::check(doing.c_str());
    wait.poll();
    std::this_thread::yield();
  }
  if (status != IRIS_PROXY_STATUS_OK) {
    throw Error(Errc::device_fault, format("a host copy of %zu bytes %s rank %d (heap offset %llu) failed at its "
                                           "target: %s",
                                           bytes, op == IRIS_PROXY_PUT ? "to" : "from", rank,
                                           static_cast<unsigned long long>(offset),
                                           status == IRIS_PROXY_STATUS_OUTSIDE ? "it lies outside the target's heap"
                                                                               : "the target's log says why"));
  }
}

void Proxy::run() {
  std::vector<uint64_t> batch;
  batch.reserve(IRIS_PROXY_RING_SLOTS);
  uint64_t tail = 0;
  auto idle_since = std::chrono::steady_clock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    batch.clear();
    while (batch.size() < IRIS_PROXY_RING_SLOTS &&
           load_acquire(&ring_->slots[tail % IRIS_PROXY_RING_SLOTS].seq) == tail + 1) {
      batch.push_back(tail++);
    }
    bool messages = false;
    {
      std::lock_guard<std::mutex> lock(transport_);
      try {
        if (!batch.empty()) kind_ == NodeTransport::messages ? serve_by_messages(batch) : serve(batch);
        messages = serve_messages();
        if (window_) window_->progress();
        channel_->progress();
      } catch (const std::exception& e) {
        log::write(log::Level::error, std::string("the inter-node transport failed: ") + e.what());
        for (uint64_t ticket : batch) {
          for (auto it = outstanding_.begin(); it != outstanding_.end();) {  // no answer completes it twice
            const bool its = it->second.host_left == nullptr && ticket >= it->second.ticket &&
                             ticket < it->second.ticket + it->second.slots;
            if (its) --awaiting_replies_;
            it = its ? outstanding_.erase(it) : std::next(it);
          }
          pieces_left_.erase(ticket);
          copies_.erase(ticket);
          ring_->slots[ticket % IRIS_PROXY_RING_SLOTS].status = IRIS_PROXY_STATUS_FAILED;
          store_release(&ring_->slots[ticket % IRIS_PROXY_RING_SLOTS].seq, ticket + 2);
        }
      }
    }
    if (!batch.empty()) {
      ring_->tail = tail;
      served_.fetch_add(batch.size(), std::memory_order_relaxed);
    }
    if (!batch.empty() || messages) {
      idle_since = std::chrono::steady_clock::now();
    } else if (awaiting_replies_ > 0 || channel_->sending() ||
               std::chrono::steady_clock::now() - idle_since < std::chrono::milliseconds(2)) {
      // A device thread waits for every answer, and a flag's answer often follows within microseconds:
      // while answers are due, while a message of this proxy is still on its way (MPI moves a large one
      // only as its sender calls into MPI: a get's answer went at a fragment per 20 us sleep), and for a
      // while after the last work, give the core away but keep looking.
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));  // idle: an idle rank costs nothing
    }
  }
}

}  // namespace iris::session
