// 128-bit content digests for cache keys (xxHash's XXH3-128: fast, and collisions between distinct
// kernels are out of reach in practice).
#pragma once

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

}  // namespace iris::compiler
