// iris's own device barrier (kernels/device_barrier.hip) and what the registry hands every module: two
// "ranks" in this process, each with its own backend and registry over the same fake heaps, run their
// barrier kernels on two threads as two processes would.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "kernel_test_support.hpp"

using iris::test::CpuDevice;
using iris::test::error_of;

namespace {

// Rank 1 of the job whose rank 0 is `rank0`: the same heaps, its own backend, registry and mailbox.
struct SecondRank {
  std::unique_ptr<iris::comm::Comm> comm = iris::comm::Comm::create(nullptr, nullptr);
  iris::runtime::CpuBackend backend{*comm};
  iris::abi::DeviceMailbox mailbox{};
  std::unique_ptr<iris::programs::Registry> registry;

  SecondRank(CpuDevice& rank0, iris::programs::RegistryOptions options) {
    auto* bases = reinterpret_cast<uint64_t*>(rank0.heaps[1]);  // rank 1's table, in its heap
    bases[0] = reinterpret_cast<uint64_t>(rank0.heaps[0]);
    bases[1] = reinterpret_cast<uint64_t>(rank0.heaps[1]);
    iris::programs::DeviceContext device;
    device.backend = &backend;
    device.rank = 1;
    device.world_size = 2;
    device.heap_bases = bases;
    device.heap_base = rank0.heaps[1];
    device.mailbox = {&mailbox, &mailbox, sizeof(mailbox)};
    backend.watch_mailbox(device.mailbox);
    registry = std::make_unique<iris::programs::Registry>(device, options);
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("the device barrier lets a rank go on only once every rank has arrived, round after round",
          "[unit][cpu][barrier]") {
  CpuDevice rank0(2, 0);
  SecondRank rank1(rank0, CpuDevice::default_options());
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    double rank0_waited = 0;
    std::thread first([&] {
      rank0.registry->device_barrier();  // the cpu backend runs the kernel now: it returns once released
      rank0.registry->synchronize();
      rank0_waited = seconds_since(start);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    rank1.registry->device_barrier();
    rank1.registry->synchronize();
    first.join();
    CHECK(rank0_waited >= 0.14);
  }
  // Slot r of every rank holds the last epoch rank r arrived at.
  const auto* slots = reinterpret_cast<const uint64_t*>(rank0.heaps[0] + 32 * 1024);
  CHECK(slots[0] == 3);
  CHECK(slots[1] == 3);
}

TEST_CASE("a rank that never reaches the device barrier is a fault naming device_barrier", "[unit][cpu][barrier]") {
  auto options = CpuDevice::default_options();
  options.wait_timeout_ns = 300'000'000;
  CpuDevice rank0(2, 0, options);
  const std::string message = error_of([&] {
    rank0.registry->device_barrier();
    rank0.registry->synchronize();
  });
  CHECK_THAT(message, Catch::Contains("device fault in kernel iris_device_barrier (kernels/device_barrier.hip) on rank 0"));
  // Rank 1 never arrived (its slot still holds 0): the report names it (it gave only an address).
  CHECK_THAT(message, Catch::Contains("device_barrier on rank 0: rank 1 did not arrive within 0.3 s (it arrived at 0 "
                                      "device barriers before, this is number 1)"));
}

TEST_CASE("every module is told its rank, heap bases, mailbox and wait budget", "[unit][cpu]") {
  auto options = CpuDevice::default_options();
  options.wait_timeout_ns = 1234;
  CpuDevice device(2, 1, options);
  auto& k = device.compile(R"(
    __global__ void state(int64_t* out) {
      out[0] = __iris_module_state.rank;
      out[1] = __iris_module_state.world_size;
      out[2] = __iris_module_state.wait_timeout_ns;
      out[3] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(__iris_module_state.heap_bases));
      out[4] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(__iris_module_state.mailbox));
    }
  )").kernel("state");
  auto* out = device.at<int64_t>(1);
  device.launch(k, {1, 1, 1}, {1, 1, 1}, 0, out);
  CHECK(out[0] == 1);
  CHECK(out[1] == 2);
  CHECK(out[2] == 1234);
  CHECK(out[3] == reinterpret_cast<int64_t>(device.heap_bases));
  CHECK(out[4] == reinterpret_cast<int64_t>(&device.mailbox));
}

TEST_CASE("with IRIS_LAUNCH_BLOCKING a fault is raised by the launch itself", "[unit][cpu]") {
  auto options = CpuDevice::default_options();
  options.launch_blocking = true;
  CpuDevice device(1, 0, options);
  auto& k = device.compile("__global__ void poke(int* p) { p[0] = 1; }").kernel("poke");
  int* bad = reinterpret_cast<int*>(8);
  void* args[] = {&bad};
  iris::runtime::LaunchConfig config;
  CHECK_THAT(error_of([&] { device.registry->launch(k, config, args); }), Catch::Contains("illegal address 0x8"));
}
