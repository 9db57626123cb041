// How a GPU backend writes `count` copies of a 1-, 2-, 4- or 8-byte pattern: with the driver's
// memset of the pattern's width when the address is aligned for it (or when every byte of the pattern
// is the same), else by doubling. Drivers have no 8-byte memset, and their 2- and 4-byte ones need an
// aligned address.
//
// Doubling: copy a host-built seed of the pattern to the start of the range, then extend it with
// device-to-device copies of what is already written ([0,n) to [n,2n), ...): log2(count) copies on
// the stream, every byte written once, any alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iris::runtime {

enum class FillMethod { memset8, memset16, memset32, doubling };

struct FillPlan {
  FillMethod method = FillMethod::doubling;
  uint32_t value = 0;   // the memset's value (8, 16 or 32 bits wide)
  size_t elements = 0;  // how many memset elements of that width
};

// Throws Error(invalid_argument) for a pattern width other than 1, 2, 4 or 8.
FillPlan plan_fill(uintptr_t address, const void* pattern, size_t pattern_bytes, size_t count);

// The pattern repeated, at most `max_seed_bytes` (rounded down to whole patterns, at least one).
std::vector<uint8_t> fill_seed(const void* pattern, size_t pattern_bytes, size_t count,
                               size_t max_seed_bytes = 64 * 1024);

struct CopyStep {
  size_t dst_offset, src_offset, bytes;
};

// The copies that extend a written prefix of `seed_bytes` to `total_bytes` (both whole patterns).
std::vector<CopyStep> doubling_copies(size_t seed_bytes, size_t total_bytes);

}  // namespace iris::runtime
