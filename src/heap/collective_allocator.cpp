#include "heap/collective_allocator.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace iris::heap {

CollectiveAllocator::CollectiveAllocator(size_t begin, size_t end, size_t alignment, int world_size, int rank)
    : allocator_(begin, end, alignment), world_size_(world_size), rank_(rank) {}

void CollectiveAllocator::release_local(size_t offset) {
  if (!allocator_.is_allocated(offset)) {
    throw Error(Errc::internal, format("rank %d released heap offset %zu, which is not an allocated block", rank_, offset));
  }
  if (!released_here_.insert(offset).second) {
    throw Error(Errc::internal, format("rank %d released heap offset %zu twice", rank_, offset));
  }
  pending_.push_back(offset);
}

std::vector<uint64_t> CollectiveAllocator::take_pending() {
  std::vector<uint64_t> out;
  out.swap(pending_);
  return out;
}

size_t CollectiveAllocator::apply_releases(const std::vector<std::vector<uint64_t>>& released_by_rank) {
  if (static_cast<int>(released_by_rank.size()) != world_size_) {
    throw Error(Errc::internal, format("release exchange brought %zu lists for %d ranks", released_by_rank.size(), world_size_));
  }
  std::vector<uint64_t> complete;
  for (int r = 0; r < world_size_; ++r) {
    for (uint64_t offset : released_by_rank[r]) {
      if (!allocator_.is_allocated(offset)) {
        throw Error(Errc::internal, format("rank %d released heap offset %llu, which is not an allocated block", r,
                                           static_cast<unsigned long long>(offset)));
      }
      auto& by = released_by_[offset];
      if (by.empty()) by.assign(world_size_, false);
      if (by[r]) {
        throw Error(Errc::internal,
                    format("rank %d released heap offset %llu twice", r, static_cast<unsigned long long>(offset)));
      }
      by[r] = true;
      if (std::count(by.begin(), by.end(), true) == world_size_) complete.push_back(offset);
    }
  }
  // Ascending order: the same on every rank whatever order the lists came in.
  std::sort(complete.begin(), complete.end());
  for (uint64_t offset : complete) {
    released_by_.erase(offset);
    released_here_.erase(offset);
    allocator_.release(offset);
  }
  return complete.size();
}

}  // namespace iris::heap
