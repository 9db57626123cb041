// What every GPU device test shares: the ranks, the backend under test (IRIS_BACKEND, set from
// IRIS_TEST_BACKEND by tests/with_backend.sh), and a small symmetric heap on it with every peer's
// heap mapped. Created on first use and kept for the whole process: a GPU context takes a while to
// start, and a backend allocates its heap once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "runtime/backend.hpp"

namespace iris::gpu_test {

// main() hands over the communicator before the tests run, and ends the session after them.
void start(comm::Comm& comm);
void end();

comm::Comm& ranks();
runtime::Backend& backend();
std::string backend_name();  // "cuda" or "hip"
// GPUs this process sees.
int device_count();

// The heap of every rank as this rank sees it (index: rank). Collective on first use.
struct Heaps {
  size_t bytes = 0;
  std::vector<char*> bases;
  char* mine() const;
};
const Heaps& heaps();

// Disjoint regions of each heap, one per kind of test, so tests leave each other's data alone.
constexpr size_t kHeapBytes = size_t(1) << 30;  // the default heap of a GPU rank
constexpr size_t kPatternRegion = 0;            // 16 MiB: a rank-specific pattern peers read
constexpr size_t kPatternBytes = 16u << 20;
constexpr size_t kScratchRegion = 16u << 20;    // 16 MiB: where this rank copies peers' data to
constexpr size_t kSlotsRegion = 32u << 20;      // 1 MiB: 4 KiB per rank that peers write into
constexpr size_t kSlotBytes = 4096;
constexpr size_t kCounterRegion = 33u << 20;    // 4 KiB: counters peers add to atomically
constexpr size_t kLocalRegion = 40u << 20;      // 24 MiB: single-rank tests
constexpr size_t kBandwidthSource = 256u << 20; // 256 MiB read by peers
constexpr size_t kBandwidthTarget = 512u << 20; // 256 MiB this rank copies into
constexpr size_t kBandwidthBytes = 256u << 20;

// The value at index i of rank r's pattern (distinct for every rank and index).
inline uint32_t pattern_value(int rank, size_t i) {
  return static_cast<uint32_t>((rank + 1) * 0x9E3779B1u) ^ static_cast<uint32_t>(i * 2654435761u);
}

// Every rank arrives before any leaves; `step` names the point (ranks at different steps get an error
// naming both instead of a hang).
void barrier(const std::string& step);

// Where `host` differs from `expected`: the count and the first mismatch, for test messages.
struct Mismatches {
  size_t count = 0;
  size_t first = 0;
  uint32_t got = 0, expected = 0;
  std::string describe() const;
};
Mismatches compare(const std::vector<uint32_t>& host, const std::vector<uint32_t>& expected);

// The hand-written PTX kernels of tests/gpu/test_kernels.ptx, as load_module takes them.
std::vector<uint8_t> test_kernels_ptx();
// Those kernels loaded on the backend, once per process (released before the backend at end()).
runtime::Module& test_module();

// Exit codes of `iris_gpu_tests --probe <requirement>`: 0 when the tests can run here, 77 (ctest:
// skipped) with the reason printed when not, 1 when the backend should run but does not.
int probe(const std::string& requirement);

}  // namespace iris::gpu_test
