#include "runtime/cpu/cpu_store_buffer.hpp"

#include <algorithm>
#include <cstring>

namespace iris::runtime::cpu {
namespace {

bool overlap(const char* a, size_t a_bytes, const char* b, size_t b_bytes) { return a < b + b_bytes && b < a + a_bytes; }

// Writes a pending store. Aligned stores of 1, 2, 4 and 8 bytes stay single stores, as the device
// code's would have been: another thread never sees half of one.
void write_to_memory(char* dst, const unsigned char* data, size_t bytes) {
  const bool single = bytes <= 8 && (bytes & (bytes - 1)) == 0 && reinterpret_cast<uintptr_t>(dst) % bytes == 0;
  if (!single) {
    std::memcpy(dst, data, bytes);
    return;
  }
  uint64_t v = 0;
  std::memcpy(&v, data, bytes);
  switch (bytes) {
    case 8: __atomic_store_n(reinterpret_cast<uint64_t*>(dst), v, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n(reinterpret_cast<uint32_t*>(dst), static_cast<uint32_t>(v), __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n(reinterpret_cast<uint16_t*>(dst), static_cast<uint16_t>(v), __ATOMIC_RELAXED); break;
    default: __atomic_store_n(reinterpret_cast<uint8_t*>(dst), static_cast<uint8_t>(v), __ATOMIC_RELAXED); break;
  }
}

}  // namespace

void StoreBuffer::read(void* out, const void* src, size_t bytes) const {
  std::memmove(out, src, bytes);
  const char* s = static_cast<const char*>(src);
  for (const Entry& e : entries_) {
    if (!overlap(e.dst, e.data.size(), s, bytes)) continue;
    const char* from = std::max<const char*>(e.dst, s);
    const char* to = std::min<const char*>(e.dst + e.data.size(), s + bytes);
    std::memcpy(static_cast<char*>(out) + (from - s), e.data.data() + (from - e.dst), static_cast<size_t>(to - from));
  }
}

void StoreBuffer::store(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  std::vector<unsigned char> data(bytes);
  read(data.data(), src, bytes);  // before anything moves: src may be this thread's own pending store
  char* d = static_cast<char*>(dst);
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    if (e.dst == d && e.data.size() == bytes) {  // the same bytes again: the newer value replaces it
      e.data = std::move(data);
      return;
    }
    if (overlap(e.dst, e.data.size(), d, bytes)) {
      commit(i);  // the older store reaches memory first; entry i is now another one
    } else {
      ++i;
    }
  }
  entries_.push_back(Entry{d, std::move(data)});
}

void StoreBuffer::commit_overlapping(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t i = 0; i < entries_.size();) {
    if (overlap(entries_[i].dst, entries_[i].data.size(), c, bytes)) {
      commit(i);
    } else {
      ++i;
    }
  }
}

void StoreBuffer::commit_one(Random& random) {
  if (!entries_.empty()) commit(random.below(entries_.size()));
}

void StoreBuffer::commit_all(Random& random) {
  while (!entries_.empty()) commit(random.below(entries_.size()));
}

void StoreBuffer::move_into(StoreBuffer& other) {
  for (Entry& e : entries_) other.entries_.push_back(std::move(e));
  entries_.clear();
}

void StoreBuffer::commit(size_t index) {
  Entry& e = entries_[index];
  write_to_memory(e.dst, e.data.data(), e.data.size());
  if (index + 1 != entries_.size()) e = std::move(entries_.back());  // pending stores are unordered
  entries_.pop_back();
}

}  // namespace iris::runtime::cpu
