// 128-bit content digests for cache keys (xxHash's XXH3-128: fast, and collisions between distinct
// kernels are out of reach in practice).
#pragma once

#include <cstddef>
#include <string>

namespace iris::compiler {

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  // Adds the length, then the bytes: ("ab", "c") and ("a", "bc") hash differently.
  Hasher& add(const std::string& part);
  Hasher& add(const void* data, size_t bytes);
  std::string hex() const;  // 32 lower-case hex digits

 private:
  void* state_;
};

// The digest of `bytes` bytes at `data` stored under `key` (32 lower-case hex digits): what a cache entry
// carries to show that its content is what was written under that key (an entry copied under another
// key does not match).
std::string digest_of_entry(const std::string& key, const void* data, size_t bytes);

}  // namespace iris::compiler
