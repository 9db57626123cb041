// The symmetric heap of one rank: its own heap on the backend's device, every peer's heap mapped in,
// the heap bases table on the device, and the collective allocator on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iris::comm {
class Comm;
}
namespace iris::runtime {
class Backend;
}

namespace iris::heap {

class SymmetricHeap {
 public:
  // Collective: allocates `bytes` on every rank, exchanges handles and opens every peer.
  SymmetricHeap(runtime::Backend& backend, comm::Comm& comm, size_t bytes);
  ~SymmetricHeap();

  size_t size() const { return bytes_; }
  // Where this rank sees rank r's heap (r == own rank: its own base).
  void* base_of(int rank) const { return bases_[rank]; }
  // Device pointer to world_size uint64_t: base_of(r) for every r, as kernels read it.
  const uint64_t* device_heap_bases() const { return device_heap_bases_; }

 private:
  runtime::Backend& backend_;
  comm::Comm& comm_;
  size_t bytes_ = 0;
  std::vector<void*> bases_;
  const uint64_t* device_heap_bases_ = nullptr;
};

}  // namespace iris::heap
