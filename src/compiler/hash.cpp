#include "compiler/hash.hpp"

#include <cstdint>
#include <cstdio>
#include <new>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace iris::compiler {

Hasher::Hasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Hasher::~Hasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

Hasher& Hasher::add(const std::string& part) {
  const uint64_t length = part.size();
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), &length, sizeof(length));
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), part.data(), part.size());
  return *this;
}

std::string Hasher::hex() const {
  const XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

}  // namespace iris::compiler
