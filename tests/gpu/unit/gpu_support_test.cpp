// The pure parts the cuda and hip backends share (src/runtime/gpu): device choice, launch checks,
// fault reports, pattern fills, heap handles.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "runtime/gpu/device_choice.hpp"
#include "runtime/fault_report.hpp"
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/gpu/launch_limits.hpp"
#include "runtime/pattern_fill.hpp"

using namespace iris;
using namespace iris::runtime;

namespace {

// Runs `body`, which must throw Error(kind); returns its message.
template <class Body>
std::string error_message(Errc kind, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    CHECK(e.code() == kind);
    return e.what();
  }
  FAIL("no error was thrown");
  return "";
}

gpu::DeviceLimits h200_limits() {
  gpu::DeviceLimits limits;
  limits.max_threads_per_block = 1024;
  limits.max_block[0] = 1024;
  limits.max_block[1] = 1024;
  limits.max_block[2] = 64;
  limits.max_grid[0] = 2147483647u;
  limits.max_grid[1] = 65535;
  limits.max_grid[2] = 65535;
  limits.max_shared_per_block = 227 * 1024;
  return limits;
}

LaunchConfig config(Dim3 grid, Dim3 block, size_t shared = 0) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.shared_bytes = shared;
  return c;
}

}  // namespace

TEST_CASE("ranks of a node take the GPUs round-robin by node-local rank", "[unit][gpu]") {
  std::vector<int> four_on_two;
  for (int local = 0; local < 4; ++local) four_on_two.push_back(gpu::device_for_local_rank(local, 2, "NVIDIA", "X"));
  CHECK(four_on_two == std::vector<int>{0, 1, 0, 1});
  CHECK(gpu::device_for_local_rank(3, 1, "NVIDIA", "X") == 0);
  CHECK(gpu::device_for_local_rank(5, 8, "NVIDIA", "X") == 5);
}

TEST_CASE("no visible GPU is an environment error naming the visibility variable", "[unit][gpu]") {
  setenv("IRIS_TEST_VISIBLE", "7", 1);
  std::string message =
      error_message(Errc::environment, [] { gpu::device_for_local_rank(0, 0, "NVIDIA", "IRIS_TEST_VISIBLE"); });
  CHECK(message == "no NVIDIA GPU visible to this process (IRIS_TEST_VISIBLE=7)");
  unsetenv("IRIS_TEST_VISIBLE");
  CHECK(gpu::describe_visibility("IRIS_TEST_VISIBLE") == "IRIS_TEST_VISIBLE unset");
}

TEST_CASE("a launch within the limits passes the checks", "[unit][gpu]") {
  gpu::KernelLimits kernel{1024, 1024};
  CHECK_NOTHROW(gpu::check_launch(config({132, 1, 1}, {256, 1, 1}, 96 * 1024), h200_limits(), kernel, "k", "GPU"));
  CHECK_NOTHROW(gpu::check_launch(config({1, 65535, 1}, {32, 32, 1}), h200_limits(), kernel, "k", "GPU"));
}

TEST_CASE("a launch beyond a limit is refused with a message naming the limit", "[unit][gpu]") {
  const gpu::DeviceLimits device = h200_limits();
  const gpu::KernelLimits kernel{1024, 0};
  const std::string label = "scale (pattern.lua:12)";

  CHECK(error_message(Errc::launch, [&] { gpu::check_launch(config({0, 1, 1}, {1, 1, 1}), device, kernel, label, "H200"); }) ==
        "launch of scale (pattern.lua:12): grid {0,1,1} has a zero dimension: every dimension of grid and block is at "
        "least 1");
  CHECK(error_message(Errc::launch, [&] {
          gpu::check_launch(config({1, 70000, 1}, {1, 1, 1}), device, kernel, label, "H200");
        }) == "launch of scale (pattern.lua:12): grid.y = 70000 exceeds H200's limit of 65535");
  CHECK(error_message(Errc::launch, [&] {
          gpu::check_launch(config({1, 1, 1}, {1, 1, 65}), device, kernel, label, "H200");
        }) == "launch of scale (pattern.lua:12): block.z = 65 exceeds H200's limit of 64");
  CHECK(error_message(Errc::launch, [&] {
          gpu::check_launch(config({1, 1, 1}, {1024, 2, 1}), device, kernel, label, "H200");
        }) == "launch of scale (pattern.lua:12): block {1024,2,1} is 2048 threads; H200 runs at most 1024 threads per "
              "block");
  CHECK(error_message(Errc::launch, [&] {
          gpu::check_launch(config({1, 1, 1}, {1024, 1, 1}), device, gpu::KernelLimits{512, 0}, label, "H200");
        }) == "launch of scale (pattern.lua:12): block {1024,1,1} is 1024 threads; this kernel runs at most 512 threads "
              "per block on H200 (its register use limits it): launch smaller blocks");
  CHECK(error_message(Errc::launch, [&] {
          gpu::check_launch(config({1, 1, 1}, {32, 1, 1}, 227 * 1024), device, gpu::KernelLimits{1024, 1024}, label,
                            "H200");
        }) == "launch of scale (pattern.lua:12): 227 KiB of dynamic shared memory (+ 1 KiB static) per block is "
              "more than the 227 KiB H200 allows");
}

TEST_CASE("the kernels in flight are named with their counts, and stay bounded", "[unit][gpu]") {
  KernelsInFlight in_flight;
  CHECK(in_flight.describe() == "none");
  in_flight.launched("put (a.lua:1)");
  in_flight.launched("put (a.lua:1)");
  in_flight.launched("check (a.lua:2)");
  in_flight.launched("put (a.lua:1)");
  CHECK(in_flight.describe() == "put (a.lua:1) x3, check (a.lua:2)");
  for (int i = 0; i < 20; ++i) in_flight.launched("k" + std::to_string(i));
  CHECK(in_flight.describe() ==
        "put (a.lua:1) x3, check (a.lua:2), k0, k1, k2, k3, k4, k5 and 14 launches of other kernels");
  in_flight.clear();
  CHECK(in_flight.empty());
  CHECK(in_flight.describe() == "none");
}

TEST_CASE("a mailbox report names the wait, rank, address, last value and expected value", "[unit][gpu]") {
  abi::DeviceMailbox mailbox{};
  CHECK(describe_mailbox(mailbox).empty());
  mailbox.failed = 1;
  mailbox.rank = 3;
  mailbox.address = 0x7f3a00001000ull;
  mailbox.last_value = -1;
  mailbox.expected = 42;
  mailbox.comparison = 2;
  mailbox.waited_seconds = 10.0;
  std::strcpy(mailbox.what, "wait_until");
  CHECK(describe_mailbox(mailbox) ==
        "wait_until on rank 3 gave up after 10.0 s: address 0x7f3a00001000 held -1, waited for a value < 42 (iris::Cmp::lt)");
}

TEST_CASE("a device fault names the GPU, the driver's error, the kernels in flight and the mailbox, and sticks",
          "[unit][gpu]") {
  FaultState faults;
  faults.launched("put_ones (pattern.lua:12)");
  abi::DeviceMailbox mailbox{};
  mailbox.failed = 1;
  mailbox.rank = 1;
  mailbox.address = 0x1000;
  mailbox.expected = 1;
  mailbox.waited_seconds = 10.0;
  std::strcpy(mailbox.what, "wait_until");
  MappedHostBuffer buffer{&mailbox, &mailbox, sizeof mailbox};

  const std::string message = error_message(Errc::device_fault, [&] {
    faults.raise("CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)", "cuStreamQuery", 1, "NVIDIA H200", buffer);
  });
  CHECK(message ==
        "device fault on GPU 1 (NVIDIA H200): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure), reported by "
        "cuStreamQuery; kernels launched since the last synchronization: put_ones (pattern.lua:12); wait_until on rank 1 "
        "gave up after 10.0 s: address 0x1000 held 0, waited for a value == 1 (iris::Cmp::eq); the GPU context is unusable now, the "
        "job ends");
  CHECK(faults.faulted());
  CHECK(error_message(Errc::device_fault, [&] { faults.throw_if_faulted(); }) == message);
  // A second report keeps the first (the root cause), whatever call noticed it next.
  CHECK(error_message(Errc::device_fault, [&] {
          faults.raise("CUDA_ERROR_ILLEGAL_ADDRESS", "cuMemcpyDtoHAsync", 1, "NVIDIA H200", MappedHostBuffer{});
        }) == message);
}

TEST_CASE("fills use the driver's memset of the pattern's width when the address allows it", "[unit][gpu]") {
  const uint8_t one[1] = {0xab};
  const uint8_t two[2] = {0x01, 0x02};
  const uint8_t four[4] = {1, 2, 3, 4};
  const uint8_t eight_halves_equal[8] = {1, 2, 3, 4, 1, 2, 3, 4};
  const uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint8_t zeros[8] = {};

  auto plan = plan_fill(0x1000, one, 1, 10);
  CHECK((plan.method == FillMethod::memset8 && plan.value == 0xab && plan.elements == 10));
  plan = plan_fill(0x1000, two, 2, 10);
  CHECK((plan.method == FillMethod::memset16 && plan.value == 0x0201 && plan.elements == 10));
  plan = plan_fill(0x1000, four, 4, 10);
  CHECK((plan.method == FillMethod::memset32 && plan.value == 0x04030201u && plan.elements == 10));
  plan = plan_fill(0x1000, eight_halves_equal, 8, 10);
  CHECK((plan.method == FillMethod::memset32 && plan.value == 0x04030201u && plan.elements == 20));
  plan = plan_fill(0x1000, zeros, 8, 10);
  CHECK((plan.method == FillMethod::memset8 && plan.value == 0 && plan.elements == 80));
  CHECK(plan_fill(0x1000, eight, 8, 10).method == FillMethod::doubling);
  CHECK(plan_fill(0x1001, two, 2, 10).method == FillMethod::doubling);
  CHECK(plan_fill(0x1002, four, 4, 10).method == FillMethod::doubling);
  CHECK(error_message(Errc::invalid_argument, [&] { plan_fill(0x1000, eight, 3, 10); }) ==
        "fill pattern of 3 bytes: patterns are 1, 2, 4 or 8 bytes wide");
}

TEST_CASE("a doubling fill writes every byte of the pattern, for any count", "[unit][gpu]") {
  const uint8_t pattern[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  for (size_t count : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(8191), size_t(8192), size_t(8193),
                       size_t(100000)}) {
    // Emulates the device: a guard byte on each side, the seed copied in, then the copies.
    std::vector<uint8_t> memory(count * 8 + 2, 0xee);
    uint8_t* range = memory.data() + 1;
    const std::vector<uint8_t> seed = fill_seed(pattern, 8, count);
    REQUIRE(seed.size() % 8 == 0);
    REQUIRE(seed.size() <= 64 * 1024);
    std::memcpy(range, seed.data(), seed.size());
    const auto steps = doubling_copies(seed.size(), count * 8);
    for (const auto& step : steps) {
      REQUIRE(step.dst_offset >= step.src_offset + step.bytes);  // never overlapping
      std::memcpy(range + step.dst_offset, range + step.src_offset, step.bytes);
    }
    size_t wrong = 0;
    for (size_t i = 0; i < count * 8; ++i) wrong += range[i] != pattern[i % 8];
    INFO("count " << count);
    CHECK(wrong == 0);
    CHECK(memory.front() == 0xee);
    CHECK(memory.back() == 0xee);
    // log2 of count / seed copies, not count of them.
    CHECK(steps.size() <= 8);
  }
}

TEST_CASE("heap handles round-trip and refuse what another backend exported", "[unit][gpu]") {
  gpu::HeapHandle handle;
  handle.backend = "cuda";
  handle.pci_bus_id = "0000:3B:00.0";
  handle.bytes = 1ull << 30;
  for (size_t i = 0; i < handle.ipc.size(); ++i) handle.ipc[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> bytes = gpu::encode_heap_handle(handle);
  gpu::HeapHandle other = handle;
  other.pci_bus_id = "x";
  CHECK(gpu::encode_heap_handle(other).size() == bytes.size());

  const gpu::HeapHandle back = gpu::decode_heap_handle(bytes, "cuda", 1);
  CHECK(back.backend == "cuda");
  CHECK(back.pci_bus_id == "0000:3B:00.0");
  CHECK(back.bytes == handle.bytes);
  CHECK(back.ipc == handle.ipc);

  CHECK(error_message(Errc::environment, [&] { gpu::decode_heap_handle(bytes, "hip", 2); }) ==
        "rank 2 exported its heap from the cuda backend and this rank uses hip: every rank must use the same backend "
        "(iris.init{backend=}, IRIS_BACKEND)");
  CHECK(error_message(Errc::environment, [&] { gpu::decode_heap_handle(std::vector<uint8_t>(24, 1), "cuda", 3); }) ==
        "rank 3's heap handle (24 bytes) is not a GPU heap handle of iris-lua: do all ranks use the cuda backend "
        "(iris.init{backend=}, IRIS_BACKEND)?");
  CHECK(error_message(Errc::internal, [&] { gpu::check_peer_heap_size(back, 1ull << 29, 1); }) ==
        "rank 1's heap is 1 GiB, this rank expected 512 MiB");
}
