#include "heap/symmetric_heap.hpp"

#include "core/error.hpp"

namespace iris::heap {

SymmetricHeap::SymmetricHeap(runtime::Backend& backend, comm::Comm& comm, size_t bytes)
    : backend_(backend), comm_(comm), bytes_(bytes) {
  throw Error(Errc::unsupported, "the symmetric heap is not available in this version of iris-lua");
}

SymmetricHeap::~SymmetricHeap() = default;

}  // namespace iris::heap
