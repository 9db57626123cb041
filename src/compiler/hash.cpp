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

Hasher& Hasher::add(const std::string& part) { return add(part.data(), part.size()); }

Hasher& Hasher::add(const void* data, size_t bytes) {
  const uint64_t length = bytes;
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), &length, sizeof(length));
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, bytes);
  return *this;
}

namespace {
std::string hex_of(const XXH128_hash_t& h) {
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}
}  // namespace

std::string Hasher::hex() const { return hex_of(XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_))); }

std::string digest_of_entry(const std::string& key, const void* data, size_t bytes) {
  return Hasher().add(key).add(data, bytes).hex();
}

}  // namespace iris::compiler
