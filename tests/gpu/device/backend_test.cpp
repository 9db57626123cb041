// The backend under test, through the Backend interface: its device, copies, fills, mapped host
// memory and events, on this rank's own heap.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <regex>

#include "core/error.hpp"
#include "gpu_session.hpp"

using namespace iris;
using namespace iris::gpu_test;
using Catch::Matchers::Contains;

namespace {

std::vector<uint8_t> random_bytes(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(generator());
  return bytes;
}

size_t differing_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

}  // namespace

TEST_CASE("the backend uses the GPU of its node-local rank modulo the device count", "[gpu]") {
  runtime::Backend& gpu = backend();
  const int devices = device_count();
  std::printf("[gpu test] rank %d (node-local %d of %d) uses GPU %d of %d: %s\n", ranks().rank(), ranks().local_rank(),
              ranks().local_size(), gpu.device(), devices, gpu.device_name().c_str());
  CHECK(gpu.device() == ranks().local_rank() % devices);
  CHECK(std::string(gpu.name()) == backend_name());
  CHECK_FALSE(gpu.host_addressable());
}

TEST_CASE("the backend names its device and the compiler target for it", "[gpu]") {
  runtime::Backend& gpu = backend();
  CHECK_FALSE(gpu.device_name().empty());
  const runtime::CodeTarget target = gpu.code_target();
  INFO("compiler " << target.compiler << ", arch " << target.arch);
  if (backend_name() == "cuda") {
    CHECK(target.compiler == "nvrtc");
    // sm_<major><minor>, with the architecture-specific suffix on compute capability 9.0 (sm_90a: wgmma).
    CHECK(std::regex_match(target.arch, std::regex("sm_[0-9]+a?")));
  } else {
    CHECK(target.compiler == "hiprtc");
    CHECK(std::regex_match(target.arch, std::regex("gfx[0-9a-f]+(:.*)?")));
  }
}

TEST_CASE("host copies round-trip every byte at odd sizes and offsets", "[gpu]") {
  runtime::Backend& gpu = backend();
  char* region = heaps().mine() + kLocalRegion;
  unsigned seed = 1;
  for (size_t bytes : {size_t(1), size_t(3), size_t(4097), size_t((1u << 20) + 5)}) {
    for (size_t offset : {size_t(0), size_t(1), size_t(7)}) {
      INFO(bytes << " bytes at offset " << offset);
      const std::vector<uint8_t> sent = random_bytes(bytes, seed++);
      gpu.copy_from_host(region + offset, sent.data(), bytes);
      std::vector<uint8_t> back(bytes);
      gpu.copy_to_host(back.data(), region + offset, bytes);
      CHECK(differing_bytes(back, sent) == 0);
      // Device to device, to another odd offset, and back to the host.
      char* elsewhere = region + (8u << 20) + offset + 3;
      gpu.copy_device(elsewhere, region + offset, bytes);
      std::vector<uint8_t> moved(bytes);
      gpu.copy_to_host(moved.data(), elsewhere, bytes);
      CHECK(differing_bytes(moved, sent) == 0);
    }
  }
}

TEST_CASE("fill writes each pattern width exactly and nothing around it", "[gpu]") {
  runtime::Backend& gpu = backend();
  char* region = heaps().mine() + kLocalRegion;
  const uint8_t patterns[][8] = {
      {0x5a},                                            // 1 byte
      {0x01, 0x02},                                      // 2 bytes
      {0x01, 0x02, 0x03, 0x04},                          // 4 bytes
      {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88},  // 8 bytes, halves differ: no driver memset
      {0x11, 0x22, 0x33, 0x44, 0x11, 0x22, 0x33, 0x44},  // 8 bytes, equal halves: a 4-byte memset
  };
  const size_t widths[] = {1, 2, 4, 8, 8};
  for (int p = 0; p < 5; ++p) {
    const size_t width = widths[p];
    for (size_t offset : {size_t(0), size_t(1), size_t(2), size_t(4)}) {
      for (size_t count : {size_t(1), size_t(3), size_t(1000), size_t(300001)}) {
        INFO("pattern width " << width << " (#" << p << "), offset " << offset << ", count " << count);
        const size_t bytes = width * count;
        const uint8_t guard = 0xee;
        gpu.fill(region, &guard, 1, bytes + 64);  // guard bytes before and after the range
        gpu.fill(region + 16 + offset, patterns[p], width, count);
        std::vector<uint8_t> back(bytes + 64);
        gpu.copy_to_host(back.data(), region, back.size());
        size_t wrong = 0;
        for (size_t i = 0; i < back.size(); ++i) {
          const bool inside = i >= 16 + offset && i < 16 + offset + bytes;
          const uint8_t expected = inside ? patterns[p][(i - 16 - offset) % width] : guard;
          wrong += back[i] != expected;
        }
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("mapped host memory is zeroed and reachable from the host and the device", "[gpu]") {
  runtime::Backend& gpu = backend();
  char* region = heaps().mine() + kLocalRegion;
  runtime::MappedHostBuffer mapped = gpu.allocate_mapped_host(4096);
  REQUIRE(mapped.host != nullptr);
  REQUIRE(mapped.device != nullptr);
  REQUIRE(mapped.bytes == 4096);
  const std::vector<uint8_t> zeros(4096, 0);
  CHECK(std::memcmp(mapped.host, zeros.data(), 4096) == 0);

  // Host writes, the device reads through the mapping.
  const std::vector<uint8_t> written = random_bytes(4096, 42);
  std::memcpy(mapped.host, written.data(), 4096);
  gpu.copy_device(region, mapped.device, 4096);
  std::vector<uint8_t> seen(4096);
  gpu.copy_to_host(seen.data(), region, 4096);
  CHECK(differing_bytes(seen, written) == 0);

  // The device writes through the mapping, the host reads directly.
  const std::vector<uint8_t> from_device = random_bytes(4096, 43);
  gpu.copy_from_host(region, from_device.data(), 4096);
  gpu.copy_device(mapped.device, region, 4096);
  std::vector<uint8_t> direct(static_cast<uint8_t*>(mapped.host), static_cast<uint8_t*>(mapped.host) + 4096);
  CHECK(differing_bytes(direct, from_device) == 0);

  gpu.free_mapped_host(mapped);
  CHECK(mapped.host == nullptr);
}

TEST_CASE("events measure the device work between them", "[gpu]") {
  runtime::Backend& gpu = backend();
  char* region = heaps().mine() + kLocalRegion;
  std::unique_ptr<runtime::Event> start = gpu.create_event();
  std::unique_ptr<runtime::Event> stop = gpu.create_event();
  CHECK_THROWS_WITH(stop->elapsed_ms_since(*start), Contains("record() them first"));
  start->record();
  for (int i = 0; i < 8; ++i) gpu.copy_device(region + (12u << 20), region, 12u << 20);
  stop->record();
  const double ms = stop->elapsed_ms_since(*start);
  std::printf("[gpu test] rank %d: 8 device copies of 12 MiB took %.3f ms between events\n", ranks().rank(), ms);
  CHECK(ms > 0.0);
  CHECK(ms < 10000.0);
}

TEST_CASE("a heap handle that is not this backend's, or of another size, is refused before the driver sees it",
          "[gpu]") {
  runtime::Backend& gpu = backend();
  heaps();
  const int stranger = ranks().size() + 7;  // no such rank: nothing is opened
  CHECK_THROWS_WITH(gpu.import_peer_heap(stranger, 0, std::vector<uint8_t>(64, 0x42), kHeapBytes),
                    Contains(format("rank %d's heap handle (64 bytes) is not a GPU heap handle of iris-lua", stranger)));
  CHECK_THROWS_WITH(gpu.import_peer_heap(stranger, 0, gpu.export_heap(), kHeapBytes / 2),
                    Contains(format("rank %d's heap is %s, this rank expected %s", stranger,
                                    human_bytes(kHeapBytes).c_str(), human_bytes(kHeapBytes / 2).c_str())));
}
