// The symmetric heap across ranks (collective: every rank runs every test): each rank's heap is
// exported, every peer's is imported, and each rank reads and writes every peer's heap through its
// mapping, checking every element. Ranks on different GPUs go through peer access; ranks sharing a
// GPU (4 ranks on 2 GPUs) through IPC within the device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/error.hpp"
#include "gpu_session.hpp"

using namespace iris;
using namespace iris::gpu_test;

namespace {

std::vector<uint32_t> pattern_of(int rank) {
  std::vector<uint32_t> values(kPatternBytes / sizeof(uint32_t));
  for (size_t i = 0; i < values.size(); ++i) values[i] = pattern_value(rank, i);
  return values;
}

}  // namespace

TEST_CASE("every rank maps every peer's heap at its own address", "[gpu][heap]") {
  const Heaps& h = heaps();
  std::set<char*> distinct(h.bases.begin(), h.bases.end());
  CHECK(distinct.size() == h.bases.size());
  CHECK(distinct.count(nullptr) == 0);
  std::printf("[gpu test] rank %d on GPU %d mapped %zu heaps of %zu MiB\n", ranks().rank(), backend().device(),
              h.bases.size(), h.bytes >> 20);
}

TEST_CASE("every rank reads every peer's heap exactly through its mapping", "[gpu][heap]") {
  runtime::Backend& gpu = backend();
  const Heaps& h = heaps();
  const int me = ranks().rank();
  const std::vector<uint32_t> mine = pattern_of(me);
  gpu.copy_from_host(h.mine() + kPatternRegion, mine.data(), kPatternBytes);
  barrier("heap read: every pattern written");

  std::vector<uint32_t> seen(mine.size());
  for (int peer = 0; peer < ranks().size(); ++peer) {
    const std::vector<uint32_t> expected = pattern_of(peer);
    // Through the device: the peer's heap copied into this rank's heap, then to the host.
    gpu.copy_device(h.mine() + kScratchRegion, h.bases[peer] + kPatternRegion, kPatternBytes);
    gpu.copy_to_host(seen.data(), h.mine() + kScratchRegion, kPatternBytes);
    Mismatches through_device = compare(seen, expected);
    INFO("rank " << me << " reading rank " << peer << "'s heap through a device copy: " << through_device.describe());
    CHECK(through_device.count == 0);
    // Straight from the peer's mapping to the host.
    std::fill(seen.begin(), seen.end(), 0);
    gpu.copy_to_host(seen.data(), h.bases[peer] + kPatternRegion, kPatternBytes);
    Mismatches direct = compare(seen, expected);
    INFO("rank " << me << " reading rank " << peer << "'s heap straight to the host: " << direct.describe());
    CHECK(direct.count == 0);
  }
  barrier("heap read: every rank has read every peer");
}

TEST_CASE("every rank writes into every peer's heap through its mapping", "[gpu][heap]") {
  runtime::Backend& gpu = backend();
  const Heaps& h = heaps();
  const int me = ranks().rank();
  const size_t words = kSlotBytes / sizeof(uint32_t);
  for (int peer = 0; peer < ranks().size(); ++peer) {
    char* slot = h.bases[peer] + kSlotsRegion + me * kSlotBytes;
    // The first half by a host copy into the peer's heap, the second by a fill of it.
    std::vector<uint32_t> first(words / 2);
    for (size_t i = 0; i < first.size(); ++i) first[i] = pattern_value(me * 100 + peer, i);
    gpu.copy_from_host(slot, first.data(), first.size() * sizeof(uint32_t));
    const uint32_t fill_value = pattern_value(me, peer) | 1u;
    gpu.fill(slot + kSlotBytes / 2, &fill_value, sizeof fill_value, words / 2);
  }
  barrier("heap write: every rank wrote into every peer");

  std::vector<uint32_t> slot(words);
  for (int writer = 0; writer < ranks().size(); ++writer) {
    gpu.copy_to_host(slot.data(), h.mine() + kSlotsRegion + writer * kSlotBytes, kSlotBytes);
    std::vector<uint32_t> expected(words);
    for (size_t i = 0; i < words / 2; ++i) expected[i] = pattern_value(writer * 100 + me, i);
    for (size_t i = words / 2; i < words; ++i) expected[i] = pattern_value(writer, me) | 1u;
    Mismatches m = compare(slot, expected);
    INFO("rank " << me << "'s slot written by rank " << writer << ": " << m.describe());
    CHECK(m.count == 0);
  }
  barrier("heap write: every rank checked its slots");
}

TEST_CASE("copies from each peer's heap are timed, one reader at a time", "[gpu][heap]") {
  runtime::Backend& gpu = backend();
  const Heaps& h = heaps();
  const int me = ranks().rank();
  std::vector<int> devices(ranks().size());
  const int my_device = gpu.device();
  ranks().announce("bandwidth: exchange devices");
  ranks().allgather(&my_device, sizeof my_device, devices.data());
  // Uncontended: one rank copies while the others wait at the barrier.
  for (int reader = 0; reader < ranks().size(); ++reader) {
    if (reader == me) {
      for (int peer = 0; peer < ranks().size(); ++peer) {
        if (peer == me) continue;
        char* dst = h.mine() + kBandwidthTarget;
        const char* src = h.bases[peer] + kBandwidthSource;
        gpu.copy_device(dst, src, kBandwidthBytes);  // warm-up
        std::vector<double> ms;
        for (int i = 0; i < 5; ++i) {
          std::unique_ptr<runtime::Event> start = gpu.create_event(), stop = gpu.create_event();
          start->record();
          gpu.copy_device(dst, src, kBandwidthBytes);
          stop->record();
          ms.push_back(stop->elapsed_ms_since(*start));
        }
        std::sort(ms.begin(), ms.end());
        const double gb_per_s = kBandwidthBytes / (ms[2] * 1e-3) / 1e9;
        std::printf("[gpu test] rank %d (GPU %d) copy_device of %zu MiB from rank %d (GPU %d, %s): %.1f GB/s (median "
                    "of 5: %.3f ms)\n",
                    me, gpu.device(), kBandwidthBytes >> 20, peer, devices[peer],
                    devices[peer] == gpu.device() ? "same GPU" : "peer GPU", gb_per_s, ms[2]);
        CHECK(gb_per_s > 0.0);
      }
    }
    barrier(format("bandwidth: rank %d measured", reader));
  }
}
