// Modules and launches on the cuda backend, with the hand-written PTX of tests/gpu/test_kernels.ptx:
// arguments, dynamic shared memory above 48 KiB, launch limits, module variables, kernels that load,
// store and add atomically on peers' heaps, and the raw-launch timing reference.
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>

#include "core/error.hpp"
#include "gpu_session.hpp"

using namespace iris;
using namespace iris::gpu_test;
using Catch::Matchers::Contains;

namespace {

runtime::LaunchConfig launch_config(unsigned grid, unsigned block, size_t shared = 0) {
  runtime::LaunchConfig config;
  config.grid.x = grid;
  config.block.x = block;
  config.shared_bytes = shared;
  return config;
}

// dst[i] = value for i < n.
void launch_fill(char* dst, uint32_t value, uint64_t n, const std::string& label) {
  void* dst_arg = dst;
  void* args[] = {&dst_arg, &value, &n};
  backend().launch(test_module(), test_module().function("iris_test_fill_u32"), launch_config(132, 256), args, label);
}

std::vector<uint32_t> read_words(const char* device, size_t words) {
  std::vector<uint32_t> host(words);
  backend().copy_to_host(host.data(), device, words * sizeof(uint32_t));
  return host;
}

}  // namespace

TEST_CASE("a kernel launched with arguments writes exactly its range", "[gpu][ptx]") {
  char* region = heaps().mine() + kLocalRegion;
  const uint64_t n = (1u << 20) + 3;
  const uint32_t guard = 0xeeeeeeee;
  backend().fill(region, &guard, sizeof guard, n + 2);
  const uint32_t value = 0xc0de0000u + ranks().rank();
  launch_fill(region + sizeof(uint32_t), value, n, "fill (kernel_test.cpp)");
  backend().synchronize();
  std::vector<uint32_t> expected(n + 2, value);
  expected.front() = expected.back() = guard;
  Mismatches m = compare(read_words(region, n + 2), expected);
  INFO(m.describe());
  CHECK(m.count == 0);
}

TEST_CASE("dynamic shared memory above 48 KiB is granted to a kernel", "[gpu][ptx]") {
  char* out = heaps().mine() + kLocalRegion;
  const uint32_t words = 96 * 1024 / sizeof(uint32_t);
  const unsigned threads = 256;
  void* out_arg = out;
  uint32_t words_arg = words;
  void* args[] = {&out_arg, &words_arg};
  backend().launch(test_module(), test_module().function("iris_test_dynamic_shared"),
                   launch_config(1, threads, words * sizeof(uint32_t)), args, "dynamic_shared (kernel_test.cpp)");
  backend().synchronize();
  std::vector<uint32_t> expected(threads);
  for (unsigned t = 0; t < threads; ++t) expected[t] = (t + 1) % threads + 1;
  Mismatches m = compare(read_words(out, threads), expected);
  INFO(m.describe());
  CHECK(m.count == 0);
}

TEST_CASE("a launch beyond the device's limits is refused with the limit, and the device stays usable",
          "[gpu][ptx]") {
  runtime::Module& module = test_module();
  void* empty = module.function("iris_test_empty");
  CHECK_THROWS_WITH(backend().launch(module, empty, launch_config(1, 4096), nullptr, "too_wide"),
                    Contains("launch of too_wide: block.x = 4096 exceeds"));
  CHECK_THROWS_WITH(backend().launch(module, empty, launch_config(1, 32, size_t(1) << 30), nullptr, "too_much_shared"),
                    Contains("of dynamic shared memory (+ 0 B static) per block is more than the"));
  runtime::LaunchConfig tall = launch_config(1, 32);
  tall.grid.y = 100000;
  CHECK_THROWS_WITH(backend().launch(module, empty, tall, nullptr, "too_tall"), Contains("grid.y = 100000 exceeds"));
  // Refused launches leave nothing behind: the next one runs.
  backend().launch(module, empty, launch_config(1, 32), nullptr, "empty (kernel_test.cpp)");
  CHECK_NOTHROW(backend().synchronize());
}

TEST_CASE("module variables are written by name and read by kernels; unknown names are errors naming them",
          "[gpu][ptx]") {
  runtime::Module& module = test_module();
  const uint64_t value = 0x0123456789abcdefull ^ ranks().rank();
  module.write_global("iris_test_global", &value, sizeof value);
  char* out = heaps().mine() + kLocalRegion;
  void* out_arg = out;
  void* args[] = {&out_arg};
  backend().launch(module, module.function("iris_test_read_global"), launch_config(1, 1), args, "read_global");
  uint64_t seen = 0;
  backend().copy_to_host(&seen, out, sizeof seen);
  CHECK(seen == value);

  const uint32_t narrow = 1;
  CHECK_THROWS_WITH(module.write_global("iris_test_global", &narrow, sizeof narrow),
                    Contains("module variable 'iris_test_global' is 8 bytes; 4 bytes were given"));
  CHECK_THROWS_WITH(module.write_global("iris_no_such_global", &value, sizeof value),
                    Contains("module variable 'iris_no_such_global' is not in this module"));
  CHECK_THROWS_WITH(module.function("iris_no_such_kernel"), Contains("kernel 'iris_no_such_kernel' is not in this module"));
}

TEST_CASE("a module that does not compile is a compile error with the driver's log", "[gpu][ptx]") {
  const std::string broken = ".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry broken() { bogus; }\n";
  try {
    backend().load_module(std::vector<uint8_t>(broken.begin(), broken.end()));
    FAIL("broken PTX loaded");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::compile);
    CHECK_THAT(e.what(), Contains("loading a module (PTX,"));
    CHECK_THAT(e.what(), Contains("cuModuleLoadDataEx returned"));
  }
  CHECK_NOTHROW(backend().synchronize());
}

TEST_CASE("kernels load and store every peer's heap directly", "[gpu][ptx][heap]") {
  const Heaps& h = heaps();
  const int me = ranks().rank();
  const size_t words = kPatternBytes / sizeof(uint32_t);
  std::vector<uint32_t> mine(words);
  for (size_t i = 0; i < words; ++i) mine[i] = pattern_value(me, i);
  backend().copy_from_host(h.mine() + kPatternRegion, mine.data(), kPatternBytes);
  barrier("kernel loads: every pattern written");

  for (int peer = 0; peer < ranks().size(); ++peer) {
    void* dst = h.mine() + kScratchRegion;
    void* src = h.bases[peer] + kPatternRegion;
    uint64_t n = words;
    void* args[] = {&dst, &src, &n};
    backend().launch(test_module(), test_module().function("iris_test_copy_u32"), launch_config(264, 512), args,
                     format("copy from rank %d (kernel_test.cpp)", peer));
    backend().synchronize();
    std::vector<uint32_t> expected(words);
    for (size_t i = 0; i < words; ++i) expected[i] = pattern_value(peer, i);
    Mismatches m = compare(read_words(h.mine() + kScratchRegion, words), expected);
    INFO("rank " << me << " loading rank " << peer << "'s heap in a kernel: " << m.describe());
    CHECK(m.count == 0);
  }
  barrier("kernel loads: every rank read every peer");

  const size_t slot_words = kSlotBytes / sizeof(uint32_t);
  for (int peer = 0; peer < ranks().size(); ++peer) {
    launch_fill(h.bases[peer] + kSlotsRegion + me * kSlotBytes, 0xa0000000u + me * 256 + peer, slot_words,
                format("store into rank %d (kernel_test.cpp)", peer));
  }
  backend().synchronize();
  barrier("kernel stores: every rank stored into every peer");
  for (int writer = 0; writer < ranks().size(); ++writer) {
    Mismatches m = compare(read_words(h.mine() + kSlotsRegion + writer * kSlotBytes, slot_words),
                           std::vector<uint32_t>(slot_words, 0xa0000000u + writer * 256 + me));
    INFO("rank " << me << "'s slot stored by rank " << writer << "'s kernel: " << m.describe());
    CHECK(m.count == 0);
  }
  barrier("kernel stores: every rank checked its slots");
}

TEST_CASE("system-scope atomics from every rank add up in rank 0's heap", "[gpu][ptx][heap]") {
  const Heaps& h = heaps();
  char* counter = h.bases[0] + kCounterRegion;
  if (ranks().rank() == 0) {
    const uint32_t zero = 0;
    backend().fill(counter, &zero, sizeof zero, 1);
  }
  barrier("atomics: counter zeroed");
  const unsigned grid = 64, block = 256, launches = 4;
  void* counter_arg = counter;
  void* args[] = {&counter_arg};
  for (unsigned i = 0; i < launches; ++i) {
    backend().launch(test_module(), test_module().function("iris_test_atomic_add_u32"), launch_config(grid, block),
                     args, "atomic_add into rank 0 (kernel_test.cpp)");
  }
  backend().synchronize();
  barrier("atomics: every rank added");
  uint32_t total = 0;
  backend().copy_to_host(&total, counter, sizeof total);
  CHECK(total == uint64_t(ranks().size()) * launches * grid * block);
  barrier("atomics: every rank read the total");
}

TEST_CASE("time_raw_launches and events time empty kernels", "[gpu][ptx]") {
  runtime::Module& module = test_module();
  void* empty = module.function("iris_test_empty");
  const int iterations = 2000;
  const runtime::Backend::RawLaunchTimes times =
      backend().time_raw_launches(module, empty, launch_config(1, 32), nullptr, iterations);
  const double seconds = times.device;
  std::printf("[gpu test] rank %d: %d raw empty launches took %.3f ms, %.2f us per launch (the host issued them in "
              "%.2f us each)\n", ranks().rank(), iterations, seconds * 1e3, seconds * 1e6 / iterations,
              times.host * 1e6 / iterations);
  CHECK(seconds > 0.0);
  CHECK(times.host > 0.0);
  CHECK(seconds < 5.0);
  CHECK_THROWS_WITH(backend().time_raw_launches(module, empty, launch_config(1, 32), nullptr, 0),
                    Contains("time_raw_launches of 0 iterations"));

  std::unique_ptr<runtime::Event> start = backend().create_event();
  std::unique_ptr<runtime::Event> stop = backend().create_event();
  start->record();
  for (int i = 0; i < 100; ++i) backend().launch(module, empty, launch_config(1, 32), nullptr, "empty");
  stop->record();
  const double ms = stop->elapsed_ms_since(*start);
  CHECK(ms > 0.0);
  CHECK(ms < 5000.0);
  backend().synchronize();
}
