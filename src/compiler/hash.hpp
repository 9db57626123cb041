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
  std::string hex() const;  // 32 lower-case hex digits

 private:
  void* state_;
};

// The digest of `bytes` bytes at `data` (32 lower-case hex digits): what a cache entry carries to show
// that its content is what was written.
std::string digest_of_bytes(const void* data, size_t bytes);

}  // namespace iris::compiler
