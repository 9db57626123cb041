#include "heap/offset_allocator.hpp"

#include "core/error.hpp"

namespace iris::heap {

OffsetAllocator::OffsetAllocator(size_t begin, size_t end, size_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw Error(Errc::internal, format("allocator alignment %zu is not a power of two", alignment));
  }
  size_t first = (begin + alignment - 1) & ~(alignment - 1);
  size_t last = end & ~(alignment - 1);
  capacity_ = last > first ? last - first : 0;
  if (capacity_ > 0) insert_free(first, capacity_);
}

size_t OffsetAllocator::rounded(size_t bytes) const {
  if (bytes == 0) return alignment_;
  if (bytes > SIZE_MAX - alignment_) return SIZE_MAX & ~(alignment_ - 1);  // can never fit
  return (bytes + alignment_ - 1) & ~(alignment_ - 1);
}

std::optional<size_t> OffsetAllocator::allocate(size_t bytes) {
  size_t size = rounded(bytes);
  // Smallest block that fits; among equal sizes the lowest offset (the set's order).
  auto fit = free_by_size_.lower_bound({size, 0});
  if (fit == free_by_size_.end()) return std::nullopt;
  size_t block_offset = fit->second;
  size_t block_size = fit->first;
  erase_free(free_by_offset_.find(block_offset));
  if (block_size > size) insert_free(block_offset + size, block_size - size);
  allocated_.emplace(block_offset, size);
  allocated_bytes_ += size;
  return block_offset;
}

void OffsetAllocator::release(size_t offset) {
  auto it = allocated_.find(offset);
  if (it == allocated_.end()) {
    throw Error(Errc::internal, format("heap offset %zu released but not allocated", offset));
  }
  size_t start = offset;
  size_t size = it->second;
  allocated_.erase(it);
  allocated_bytes_ -= size;

  auto next = free_by_offset_.lower_bound(start);
  if (next != free_by_offset_.end() && next->first == start + size) {
    size += next->second;
    erase_free(next);
  }
  auto after = free_by_offset_.lower_bound(start);
  if (after != free_by_offset_.begin()) {
    auto previous = std::prev(after);
    if (previous->first + previous->second == start) {
      start = previous->first;
      size += previous->second;
      erase_free(previous);
    }
  }
  insert_free(start, size);
}

size_t OffsetAllocator::block_size(size_t offset) const {
  auto it = allocated_.find(offset);
  return it == allocated_.end() ? 0 : it->second;
}

AllocatorStats OffsetAllocator::stats() const {
  AllocatorStats s;
  s.capacity = capacity_;
  s.allocated_bytes = allocated_bytes_;
  s.allocated_blocks = allocated_.size();
  s.free_bytes = capacity_ - allocated_bytes_;
  s.free_blocks = free_by_offset_.size();
  s.largest_free = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  return s;
}

void OffsetAllocator::insert_free(size_t offset, size_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void OffsetAllocator::erase_free(std::map<size_t, size_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

}  // namespace iris::heap
