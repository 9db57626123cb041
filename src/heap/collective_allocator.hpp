// The allocator state every rank keeps identical: an OffsetAllocator plus the record of which ranks
// have released which blocks. Pure logic (no communication), so the protocol is unit-tested alone;
// SymmetricHeap runs the exchanges.
//
// The protocol (docs/memory.md):
//   - allocation is collective: every rank calls allocate() in the same order with the same size, so
//     every copy of the state hands out the same offset;
//   - release is local and deferred: t:free() or garbage collection on one rank only queues the offset
//     (release_local); the queue travels with the next allocation's exchange (take_pending on every
//     rank, the lists gathered, apply_releases with all of them on every rank);
//   - a block returns to the free list only once every rank has released it, in ascending offset
//     order. Every rank applies the same lists in the same order, so the state stays identical even
//     though collection happened at different moments on different ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "heap/offset_allocator.hpp"

namespace iris::heap {

class CollectiveAllocator {
 public:
  CollectiveAllocator(size_t begin, size_t end, size_t alignment, int world_size, int rank);

  // Collective step, after apply_releases(): the same call on every rank gives the same offset.
  std::optional<size_t> allocate(size_t bytes) { return allocator_.allocate(bytes); }

  // This rank no longer uses the block at `offset`. Throws Error(internal) when the offset is not an
  // allocated block or this rank released it before.
  void release_local(size_t offset);
  // The offsets this rank released since the last exchange, in the order it released them; the queue
  // is empty afterwards.
  std::vector<uint64_t> take_pending();
  // Applies every rank's list (index = rank) from one exchange; returns how many blocks went back to
  // the free list. Throws Error(internal) for an offset that is not allocated or released twice by the
  // same rank (identically on every rank: the input is the same everywhere).
  size_t apply_releases(const std::vector<std::vector<uint64_t>>& released_by_rank);

  AllocatorStats stats() const { return allocator_.stats(); }
  size_t pending() const { return pending_.size(); }
  // Blocks some ranks released but not all yet (they come back once the rest release them).
  size_t awaiting_other_ranks() const { return released_by_.size(); }

 private:
  OffsetAllocator allocator_;
  int world_size_;
  int rank_;
  std::vector<uint64_t> pending_;
  std::set<uint64_t> released_here_;                   // this rank's releases not yet back in the free list
  std::map<uint64_t, std::vector<bool>> released_by_;  // offset -> which ranks have released it
};

}  // namespace iris::heap
