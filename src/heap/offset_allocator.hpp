// A pure, deterministic allocator of offsets in one range: best fit, coalescing, fixed alignment.
//
// It knows nothing of devices or ranks. Every rank runs its own copy and feeds it the same calls in
// the same order, so every copy hands out the same offsets: that is what keeps the heap symmetric
// (collective_allocator.hpp). Determinism is therefore the first requirement: best fit picks the
// smallest free block that fits and, among equal sizes, the lowest offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace iris::heap {

struct AllocatorStats {
  size_t capacity = 0;       // bytes the allocator manages
  size_t free_bytes = 0;     // sum of free blocks
  size_t largest_free = 0;   // largest free block
  size_t allocated_bytes = 0;
  size_t allocated_blocks = 0;
  size_t free_blocks = 0;
};

class OffsetAllocator {
 public:
  // Manages [begin, end); begin and end are rounded inward to `alignment` (a power of two).
  OffsetAllocator(size_t begin, size_t end, size_t alignment);

  // The offset of a block of at least `bytes` (rounded up to the alignment; 0 bytes takes one
  // alignment unit, so every allocation has an offset of its own), or nothing when no block fits.
  std::optional<size_t> allocate(size_t bytes);
  // Returns an allocated block; neighbours that are free merge with it. Throws Error(internal) for an
  // offset that is not the start of an allocated block.
  void release(size_t offset);

  bool is_allocated(size_t offset) const { return allocated_.count(offset) != 0; }
  // Size of the allocated block at `offset` (after rounding); 0 when there is none.
  size_t block_size(size_t offset) const;
  size_t rounded(size_t bytes) const;
  AllocatorStats stats() const;

 private:
  void insert_free(size_t offset, size_t size);
  void erase_free(std::map<size_t, size_t>::iterator it);

  size_t alignment_;
  size_t capacity_;
  size_t allocated_bytes_ = 0;
  std::map<size_t, size_t> free_by_offset_;          // offset -> size, for coalescing
  std::set<std::pair<size_t, size_t>> free_by_size_;  // (size, offset), for best fit
  std::map<size_t, size_t> allocated_;                // offset -> size
};

}  // namespace iris::heap
