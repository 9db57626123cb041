// The symmetric heap of one rank: its own heap on the backend's device, every peer's heap mapped in,
// the heap bases table on the device, and the collective allocator on top (docs/memory.md).
//
// Layout (heap/layout.hpp): the heap bases table at offset 0, iris's runtime scratch at 32 KiB (both
// written at construction), user tensors from 64 KiB. The same offset names the same object in every
// rank's heap; base_of(r) + offset is where this rank reaches it in rank r's heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heap/collective_allocator.hpp"

namespace iris::comm {
class Comm;
}
namespace iris::runtime {
class Backend;
}

namespace iris::heap {

// Smallest heap worth having: the reserved 64 KiB plus room for tensors.
constexpr size_t kMinimumHeapBytes = 128 * 1024;

class SymmetricHeap {
 public:
  // Collective: allocates `bytes` on every rank, exchanges handles, opens every peer of this rank's node,
  // writes the heap bases table and zeroes the runtime scratch. Every rank fails together if any rank
  // fails. `node_of[r]`: rank r's node (empty: every rank on one node). A rank of another node is not
  // mapped: its entry is IRIS_REMOTE_TAG | r << 48 (iris/impl/abi.h), which the device API sends
  // through the host proxy.
  SymmetricHeap(runtime::Backend& backend, comm::Comm& comm, size_t bytes, const std::vector<int>& node_of = {});
  ~SymmetricHeap();
  SymmetricHeap(const SymmetricHeap&) = delete;
  SymmetricHeap& operator=(const SymmetricHeap&) = delete;

  size_t size() const { return bytes_; }
  // Where this rank sees rank r's heap (r == own rank: its own base); for a rank of another node, the
  // tagged value of the heap bases table, which is no address.
  void* base_of(int rank) const { return bases_[rank]; }
  bool mapped(int rank) const { return mapped_[rank] != 0; }
  void* local_base() const { return bases_[own_rank_]; }
  // Device pointer to world_size uint64_t: base_of(r) for every r, as kernels read it.
  const uint64_t* device_heap_bases() const { return device_heap_bases_; }

  // Collective (every rank, same order, same `bytes`; `op` names the call for divergence messages,
  // e.g. "ctx:zeros()"). Exchanges the releases queued since the last call, then allocates. Returns
  // the offset, the same on every rank; with `zero`, only once the block is zeroed on every rank
  // (without, a caller that writes contents waits for every rank itself after writing). Returns
  // nothing on every rank when the request does not fit, so the caller can collect garbage
  // everywhere and try again; with `last_attempt` that is Error(heap_exhausted) instead.
  // `tensor` says what the bytes are for ("float32 {2, 3}"): ranks asking different sizes, or the same
  // size for different dtypes or shapes, get Error(divergence) naming both sides.
  std::optional<size_t> allocate(const std::string& op, size_t bytes, bool zero, bool last_attempt,
                                 const std::string& tensor = "");
  // Local and deferred: this rank no longer uses the block; it is reused once every rank released it.
  void release(size_t offset);

  AllocatorStats stats() const { return allocator_.stats(); }
  size_t pending_releases() const { return allocator_.pending(); }
  size_t awaiting_other_ranks() const { return allocator_.awaiting_other_ranks(); }
  // "heap exhausted: asked 64 MiB, 12 MiB free (largest 8 MiB) of 1 GiB ..." for a request of `asked`.
  std::string exhausted_message(size_t asked) const;

 private:
  void exchange_releases();

  runtime::Backend& backend_;
  comm::Comm& comm_;
  size_t bytes_ = 0;
  int own_rank_ = 0;
  std::vector<void*> bases_;
  std::vector<char> mapped_;
  const uint64_t* device_heap_bases_ = nullptr;
  CollectiveAllocator allocator_;
};

}  // namespace iris::heap
