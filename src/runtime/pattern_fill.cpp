#include "runtime/pattern_fill.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace iris::runtime {

namespace {

bool all_bytes_equal(const uint8_t* bytes, size_t n) {
  return std::all_of(bytes, bytes + n, [&](uint8_t b) { return b == bytes[0]; });
}

}  // namespace

FillPlan plan_fill(uintptr_t address, const void* pattern, size_t pattern_bytes, size_t count) {
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8) {
    throw Error(Errc::invalid_argument,
                format("fill pattern of %zu bytes: patterns are 1, 2, 4 or 8 bytes wide", pattern_bytes));
  }
  const auto* bytes = static_cast<const uint8_t*>(pattern);
  if (all_bytes_equal(bytes, pattern_bytes)) return {FillMethod::memset8, bytes[0], count * pattern_bytes};
  if (pattern_bytes == 2 && address % 2 == 0) {
    uint16_t value;
    std::memcpy(&value, bytes, 2);
    return {FillMethod::memset16, value, count};
  }
  if (pattern_bytes == 4 && address % 4 == 0) {
    uint32_t value;
    std::memcpy(&value, bytes, 4);
    return {FillMethod::memset32, value, count};
  }
  if (pattern_bytes == 8 && address % 4 == 0 && std::memcmp(bytes, bytes + 4, 4) == 0) {
    uint32_t value;
    std::memcpy(&value, bytes, 4);
    return {FillMethod::memset32, value, count * 2};
  }
  return {FillMethod::doubling, 0, count};
}

std::vector<uint8_t> fill_seed(const void* pattern, size_t pattern_bytes, size_t count, size_t max_seed_bytes) {
  const size_t copies = std::max<size_t>(1, std::min(count, max_seed_bytes / pattern_bytes));
  std::vector<uint8_t> seed(copies * pattern_bytes);
  for (size_t i = 0; i < copies; ++i) std::memcpy(seed.data() + i * pattern_bytes, pattern, pattern_bytes);
  return seed;
}

std::vector<CopyStep> doubling_copies(size_t seed_bytes, size_t total_bytes) {
  std::vector<CopyStep> steps;
  if (seed_bytes == 0) return steps;
  for (size_t written = seed_bytes; written < total_bytes;) {
    const size_t n = std::min(written, total_bytes - written);
    steps.push_back({written, 0, n});
    written += n;
  }
  return steps;
}

}  // namespace iris::runtime
