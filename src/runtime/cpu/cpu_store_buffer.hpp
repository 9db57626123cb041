// The weak memory model of the cpu backend (IRIS_CPU_MEMORY_MODEL=weak): a device thread's stores that
// no other thread can see yet.
//
// x86 (and the fibers of one block, which share a core) keep stores in order, so a kernel that forgets
// a release works there and fails on a GPU. In the weak model the device API's stores to another
// rank's heap (store, put, copy, put_block, copy_block) wait in a store buffer per device thread and
// reach memory later, in random order:
//   - all of them at a release (a store, read-modify-write or fence with release or acq_rel semantics,
//     signal_set, signal_add, __threadfence*), at __syncthreads() and warp collectives (for the thread
//     that arrives), and at the end of the kernel, a little late;
//   - a random one now and then while the thread stores or spins (so a spinning peer sees progress);
//   - those to one address before any atomic on it by the same thread (a thread sees its own stores
//     in order; a relaxed atomic does not wait for the others, so a relaxed flag can overtake data).
// The thread's own loads through the device API see its buffered stores (store-to-load forwarding).
// Pending stores never overlap: a store to bytes an older pending one covers replaces it when the range
// is the same and otherwise sends the older one to memory first, so any order of draining keeps each
// address's stores in program order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iris::runtime::cpu {

// xorshift64*: the weak model's random choices, cheap and reproducible from a seed.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed != 0 ? seed : 0x9e3779b97f4a7c15ull) {}
  uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dull;
  }
  // A number in [0, n).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  uint64_t state_;
};

class StoreBuffer {
 public:
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

  // Reads [src, src + bytes) as this thread sees it: memory, overlaid with its own pending stores.
  void read(void* out, const void* src, size_t bytes) const;
  // Buffers a store of `bytes` to dst whose data is read (as this thread sees it) from src.
  void store(void* dst, const void* src, size_t bytes);
  // Makes the pending stores that overlap [p, p + bytes) visible.
  void commit_overlapping(const void* p, size_t bytes);
  // Makes one pending store, chosen at random, visible.
  void commit_one(Random& random);
  // Makes every pending store visible, in random order.
  void commit_all(Random& random);
  // Hands every pending store to `other` (a thread ended: its stores are still on their way).
  void move_into(StoreBuffer& other);

 private:
  struct Entry {
    char* dst;
    std::vector<unsigned char> data;
  };
  void commit(size_t index);  // writes entry `index` to memory and forgets it

  std::vector<Entry> entries_;
};

}  // namespace iris::runtime::cpu
