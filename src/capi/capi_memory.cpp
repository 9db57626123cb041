// The C API of the session, the symmetric heap and tensor memory (capi_memory.h).
#include "capi/capi_memory.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "heap/element_types.hpp"
#include "heap/random_fill.hpp"
#include "heap/symmetric_heap.hpp"
#include "iris/impl/abi.h"
#include "session/proxy.hpp"
#include "session/session.hpp"
#include "session/trace_session.hpp"

using namespace iris;

namespace {

heap::SymmetricHeap& session_heap() { return *session::current().heap; }
runtime::Backend& session_backend() { return *session::current().backend; }

// An address in the heap of a rank on another node: the heap bases table holds a tag there, not an
// address (iris/impl/abi.h), and the host proxy's transport moves the bytes.
struct RemoteAddress {
  int rank;
  uint64_t offset;
};
std::optional<RemoteAddress> remote_address(const void* p) {
  const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  if ((v & IRIS_REMOTE_TAG) == 0 || !session::initialized() || !session::current().proxy) return std::nullopt;
  return RemoteAddress{static_cast<int>((v & ~IRIS_REMOTE_TAG) >> IRIS_REMOTE_RANK_SHIFT), v & IRIS_REMOTE_OFFSET_MASK};
}

// Host transfers with a rank of another node, after this rank's launched work, complete on return.
void remote_get(const RemoteAddress& from, void* to, uint64_t bytes) {
  session_backend().synchronize();
  session::current().proxy->get(from.rank, from.offset, to, bytes);
}
void remote_put(const void* from, const RemoteAddress& to, uint64_t bytes) {
  session_backend().synchronize();
  session::current().proxy->put(to.rank, to.offset, from, bytes);
}

// The proxy, for a measurement of the transport with `peer`, which must be a rank of another node.
session::Proxy& proxy_with(int peer, const char* what) {
  session::Session& s = session::current();
  if (!s.proxy || peer < 0 || peer >= s.comm.size() || s.nodes.same_node(peer, s.comm.rank())) {
    throw Error(Errc::invalid_argument, format("%s runs with a rank of another node; rank %d is not one", what, peer));
  }
  return *s.proxy;
}

}  // namespace

extern "C" {

int iris_init(const char* backend, uint64_t heap_bytes, int node_size) {
  return capi::guarded([&] {
    trace::Span span("iris.init", "init");
    session::InitOptions options;
    options.backend = backend != nullptr ? backend : "";
    options.heap_bytes = heap_bytes;
    options.node_size = node_size;
    session::Session& started = session::init(options);
    if (span) {
      span.args().add("backend", started.backend->name()).add("device", started.backend->device_name());
      span.args().add("heap_bytes", static_cast<unsigned long long>(started.heap->size()));
    }
  });
}

int iris_initialized(void) { return session::initialized() ? 1 : 0; }

const char* iris_backend_names(void) {
  static const std::string names = runtime::backend_names();
  return names.c_str();
}

const char* iris_backend_name(void) { return session::initialized() ? session_backend().name() : ""; }

const char* iris_device_name(void) {
  static std::string name;
  name = session::initialized() ? session_backend().device_name() : "";
  return name.c_str();
}

const char* iris_device_arch(void) {
  static std::string arch;
  arch = session::initialized() ? session_backend().code_target().arch : "";
  return arch.c_str();
}

int iris_device_ordinal(void) { return session::initialized() ? session_backend().device() : 0; }

uint64_t iris_heap_size(void) { return session::initialized() ? session_heap().size() : 0; }

void* iris_heap_base(int rank) {
  if (!session::initialized() || rank < 0 || rank >= session::comm().size()) return nullptr;
  return session_heap().base_of(rank);
}

int iris_node_of(int rank) {
  if (!session::initialized() || rank < 0 || rank >= session::comm().size()) return -1;
  return session::current().nodes.node_of[rank];
}

int iris_local_rank_of(int rank) {
  if (!session::initialized() || rank < 0 || rank >= session::comm().size()) return -1;
  return session::current().nodes.local_rank_of[rank];
}

int iris_nodes(void) { return session::initialized() ? session::current().nodes.nodes() : 1; }

int iris_transport_ping_pong(int peer, int rounds, double* seconds) {
  return capi::guarded([&] { *seconds = proxy_with(peer, "an MPI ping-pong").ping_pong(peer, rounds); });
}

int iris_transport_bulk_send(int peer, uint64_t bytes, int rounds, int sender, double* seconds) {
  return capi::guarded(
      [&] { *seconds = proxy_with(peer, "an MPI bulk send").bulk_send(peer, bytes, rounds, sender != 0); });
}

const char* iris_transport_name(void) {
  static std::string name;
  name = session::initialized() && session::current().proxy ? session::current().proxy->transport() : "";
  return name.c_str();
}

int iris_host_addressable(void) { return session::initialized() && session_backend().host_addressable() ? 1 : 0; }

int iris_heap_allocate(const char* op, const char* tensor, uint64_t bytes, int zero, int last_attempt, uint64_t* offset) {
  return capi::guarded([&] {
    trace::Span span("allocate", "memory");
    if (span) span.args().add("op", op).add("bytes", static_cast<unsigned long long>(bytes)).add("zero", zero);
    auto result = session_heap().allocate(op, bytes, zero != 0, last_attempt != 0, tensor != nullptr ? tensor : "");
    *offset = result ? *result : UINT64_MAX;
  });
}

int iris_heap_release(uint64_t offset) { return capi::guarded([&] { session_heap().release(offset); }); }

int iris_heap_stats(uint64_t* free_bytes, uint64_t* largest_free, uint64_t* allocated_bytes, uint64_t* allocated_blocks,
                    uint64_t* pending_releases, uint64_t* awaiting_other_ranks) {
  return capi::guarded([&] {
    heap::SymmetricHeap& h = session_heap();
    heap::AllocatorStats s = h.stats();
    if (free_bytes) *free_bytes = s.free_bytes;
    if (largest_free) *largest_free = s.largest_free;
    if (allocated_bytes) *allocated_bytes = s.allocated_bytes;
    if (allocated_blocks) *allocated_blocks = s.allocated_blocks;
    if (pending_releases) *pending_releases = h.pending_releases();
    if (awaiting_other_ranks) *awaiting_other_ranks = h.awaiting_other_ranks();
  });
}

int iris_synchronize(void) {
  return capi::guarded([&] {
    trace::Span span("synchronize", "sync");
    session_backend().synchronize();
    session::trace_synchronized();
  });
}

int iris_barrier(const char* op) {
  return capi::guarded([&] {
    trace::Span span("barrier", "sync");
    if (span) span.args().add("op", op);
    session_backend().synchronize();
    session::trace_synchronized();
    session::comm().barrier(op);
  });
}

namespace {
// A copy's span: the backend waits for launched work first, so it shows what a copy really costs.
void copy_span(trace::Span& span, uint64_t bytes) {
  if (span) span.args().add("bytes", static_cast<unsigned long long>(bytes));
}
}  // namespace

int iris_copy_to_host(void* host, const void* device, uint64_t bytes) {
  return capi::guarded([&] {
    trace::Span span("copy to host", "memory");
    copy_span(span, bytes);
    if (auto remote = remote_address(device)) return remote_get(*remote, host, bytes);
    session_backend().copy_to_host(host, device, bytes);
  });
}

int iris_copy_from_host(void* device, const void* host, uint64_t bytes) {
  return capi::guarded([&] {
    trace::Span span("copy from host", "memory");
    copy_span(span, bytes);
    if (auto remote = remote_address(device)) return remote_put(host, *remote, bytes);
    session_backend().copy_from_host(device, host, bytes);
  });
}

int iris_copy_device(void* dst, const void* src, uint64_t bytes) {
  return capi::guarded([&] {
    trace::Span span("copy on device", "memory");
    copy_span(span, bytes);
    const auto from = remote_address(src), to = remote_address(dst);
    if (from && to) {
      std::vector<uint8_t> staging(bytes);
      remote_get(*from, staging.data(), bytes);
      return remote_put(staging.data(), *to, bytes);
    }
    if (from) return remote_get(*from, dst, bytes);
    if (to) return remote_put(src, *to, bytes);
    session_backend().copy_device(dst, src, bytes);
  });
}

int iris_copy_device_async(void* dst, const void* src, uint64_t bytes) {
  return capi::guarded([&] {
    if (remote_address(src) || remote_address(dst)) {
      throw Error(Errc::invalid_argument, "a copy engine copy reaches this node's heaps only");
    }
    session_backend().copy_device_async(dst, src, bytes);
  });
}

int iris_fill(void* device, const void* pattern, int pattern_bytes, uint64_t count) {
  return capi::guarded([&] {
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8) {
      throw Error(Errc::internal, format("fill pattern of %d bytes", pattern_bytes));
    }
    if (auto remote = remote_address(device)) {
      // The pattern repeated in host memory, sent in pieces of at most 1 MiB.
      const size_t per_piece = std::max<size_t>(1, (size_t(1) << 20) / static_cast<size_t>(pattern_bytes));
      std::vector<uint8_t> piece(std::min<uint64_t>(count, per_piece) * static_cast<size_t>(pattern_bytes));
      for (size_t i = 0; i < piece.size(); i += static_cast<size_t>(pattern_bytes)) {
        std::memcpy(piece.data() + i, pattern, static_cast<size_t>(pattern_bytes));
      }
      for (uint64_t done = 0; done < count;) {
        const uint64_t n = std::min<uint64_t>(count - done, per_piece);
        remote_put(piece.data(), {remote->rank, remote->offset + done * static_cast<uint64_t>(pattern_bytes)},
                   n * static_cast<uint64_t>(pattern_bytes));
        done += n;
      }
      return;
    }
    session_backend().fill(device, pattern, static_cast<size_t>(pattern_bytes), count);
  });
}

const char* iris_human_bytes(uint64_t bytes) {
  static thread_local std::string text;
  text = human_bytes(bytes);
  return text.c_str();
}

void* iris_host_alloc(uint64_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }
void iris_host_free(void* memory) { std::free(memory); }

uint16_t iris_float16_from_double(double value) { return heap::float16_from_double(value); }
double iris_float16_to_double(uint16_t bits) { return heap::float16_to_double(bits); }
uint16_t iris_bfloat16_from_double(double value) { return heap::bfloat16_from_double(value); }
double iris_bfloat16_to_double(uint16_t bits) { return heap::bfloat16_to_double(bits); }

int iris_fill_random(void* device, const char* dtype, uint64_t count, int distribution, double a, double b,
                     uint64_t seed, uint64_t stream, uint64_t counter) {
  return capi::guarded([&] {
    heap::ElementType type = heap::element_type_named(dtype);
    runtime::Backend& backend = session_backend();
    size_t bytes = count * heap::element_size(type);
    heap::RandomStream s{seed, stream, counter};
    auto d = static_cast<heap::Distribution>(distribution);
    if (backend.host_addressable()) {
      backend.synchronize();
      heap::random_fill(device, type, count, d, a, b, s);
    } else {
      std::vector<uint8_t> staging(bytes);
      heap::random_fill(staging.data(), type, count, d, a, b, s);
      backend.copy_from_host(device, staging.data(), bytes);
    }
  });
}

}  // extern "C"
