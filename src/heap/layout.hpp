// The layout of every rank's symmetric heap. The same on every rank, so a reserved object has the same
// offset everywhere and any rank can reach it in any other rank's heap.
//
//   [0, 32 KiB)        heap bases table: world_size uint64_t, where this rank sees each rank's heap
//   [32 KiB, 64 KiB)   runtime scratch: flags and counters of iris's own device code: the device barrier's
//                      slots from 32 KiB, the collectives' state from 40 KiB (IRIS_CCL_STATE_OFFSET)
//   [64 KiB, size)     user tensors, managed by the collective allocator
#pragma once

#include <cstddef>

#include "iris/impl/abi.h"

namespace iris::heap {

constexpr size_t kHeapBasesOffset = 0;
constexpr size_t kHeapBasesBytes = 32 * 1024;  // room for 4096 ranks
constexpr size_t kRuntimeScratchOffset = 32 * 1024;
constexpr size_t kRuntimeScratchBytes = 32 * 1024;
constexpr size_t kUserOffset = 64 * 1024;
static_assert(IRIS_CCL_STATE_OFFSET >= kRuntimeScratchOffset + 8 * 1024 &&
                  IRIS_CCL_STATE_OFFSET + IRIS_CCL_STATE_BYTES <= kRuntimeScratchOffset + kRuntimeScratchBytes,
              "the collectives' state lies in the runtime scratch region, after 1024 device barrier slots");
// Every allocation starts on this boundary (at least 256 bytes, as Iris aligns; 16-byte vector accesses
// and cache lines need far less).
constexpr size_t kAlignment = 256;

}  // namespace iris::heap
