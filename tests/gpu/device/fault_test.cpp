// Device faults on the cuda backend. A fault poisons the GPU context for the rest of the process, so
// these tests are hidden ([.]) and each runs alone in its own process (tests/gpu/CMakeLists.txt runs
// them by tag).
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "gpu_session.hpp"
#include "iris/impl/abi.h"
#include "programs/registry.hpp"

using namespace iris;
using namespace iris::gpu_test;
using Catch::Matchers::Contains;

// iris_test_report_and_trap writes the mailbox at these offsets.
static_assert(offsetof(abi::DeviceMailbox, failed) == 0, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, rank) == 4, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, address) == 8, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, last_value) == 16, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, expected) == 24, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, comparison) == 32, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, waited_seconds) == 40, "mailbox layout changed: update test_kernels.ptx");
static_assert(offsetof(abi::DeviceMailbox, what) == 48, "mailbox layout changed: update test_kernels.ptx");

namespace {

runtime::LaunchConfig one_thread() {
  runtime::LaunchConfig config;
  return config;
}

// Runs `body`, which must throw Error(device_fault); returns its message.
template <class Body>
std::string fault_message(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    CHECK(e.code() == Errc::device_fault);
    return e.what();
  }
  FAIL("no device fault was reported");
  return "";
}

}  // namespace

TEST_CASE("a kernel storing to address 0 is a device fault naming the kernel and the driver's error, and it sticks",
          "[.][fault][illegal_address]") {
  runtime::Backend& gpu = backend();
  runtime::MappedHostBuffer mapped = gpu.allocate_mapped_host(64);
  std::memset(mapped.host, 0x5a, 64);
  std::unique_ptr<runtime::Module> module = gpu.load_module(test_kernels_ptx());
  gpu.launch(*module, module->function("iris_test_store_null"), one_thread(), nullptr, "store_null (fault_test.cpp:1)");

  const std::string message = fault_message([&] { gpu.synchronize(); });
  std::printf("[gpu test] the fault reads: %s\n", message.c_str());
  CHECK_THAT(message, Contains("device fault on GPU "));
  CHECK_THAT(message, Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
  CHECK_THAT(message, Contains("kernels launched since the last synchronization: store_null (fault_test.cpp:1)"));
  // Sticky: every later call reports the same fault instead of touching the dead context.
  CHECK(fault_message([&] { gpu.synchronize(); }) == message);
  uint32_t word = 0;
  CHECK(fault_message([&] { gpu.copy_to_host(&word, mapped.device, sizeof word); }) == message);
  CHECK(fault_message([&] { gpu.launch(*module, module->function("iris_test_empty"), one_thread(), nullptr, "e"); }) ==
        message);
  // Mapped host memory stays readable.
  CHECK(static_cast<unsigned char*>(mapped.host)[63] == 0x5a);
}

TEST_CASE("a failed wait reported in the mailbox is named in the device fault", "[.][fault][mailbox]") {
  runtime::Backend& gpu = backend();
  runtime::MappedHostBuffer mailbox = gpu.allocate_mapped_host(sizeof(abi::DeviceMailbox));
  gpu.watch_mailbox(mailbox);
  std::unique_ptr<runtime::Module> module = gpu.load_module(test_kernels_ptx());
  void* mailbox_arg = mailbox.device;
  uint32_t rank = ranks().rank();
  uint64_t address = 0x7f00deadbeefull;
  int64_t last = -5, expected = 42;
  void* args[] = {&mailbox_arg, &rank, &address, &last, &expected};
  gpu.launch(*module, module->function("iris_test_report_and_trap"), one_thread(), args,
             "wait_for_flag (fault_test.cpp:2)");

  const std::string message = fault_message([&] { gpu.synchronize(); });
  std::printf("[gpu test] the fault reads: %s\n", message.c_str());
  CHECK_THAT(message, Contains("wait_for_flag (fault_test.cpp:2)"));
  CHECK_THAT(message, Contains("wait_until on rank 0 gave up after 10.0 s: address 0x7f00deadbeef held -5, waited for a value == 42 (iris::Cmp::eq)"));
  // The mailbox itself, read after the fault.
  const auto* report = static_cast<const abi::DeviceMailbox*>(mailbox.host);
  CHECK(report->failed == 1);
  CHECK(report->rank == 0);
  CHECK(report->address == address);
  CHECK(report->last_value == -5);
  CHECK(report->expected == 42);
  CHECK(std::string(report->what) == "wait_until");
}

TEST_CASE("with IRIS_LAUNCH_BLOCKING=1 the launch itself reports the fault of its kernel",
          "[.][fault][launch_blocking]") {
  // The registry is where IRIS_LAUNCH_BLOCKING acts (the backend never waits after a launch itself).
  runtime::Backend& gpu = backend();
  runtime::MappedHostBuffer mailbox = gpu.allocate_mapped_host(sizeof(abi::DeviceMailbox));
  programs::DeviceContext device;
  device.backend = &gpu;
  device.mailbox = mailbox;
  programs::RegistryOptions options;
  options.launch_blocking = true;
  programs::Registry registry(device, options);
  std::unique_ptr<runtime::Module> module = gpu.load_module(test_kernels_ptx());
  programs::Kernel empty, store_null;
  empty.label = "empty";
  empty.module = store_null.module = module.get();
  empty.function = module->function("iris_test_empty");
  store_null.label = "store_null (blocking)";
  store_null.function = module->function("iris_test_store_null");
  registry.launch(empty, one_thread(), nullptr);
  const std::string message = fault_message([&] { registry.launch(store_null, one_thread(), nullptr); });
  CHECK_THAT(message, Contains("kernels launched since the last synchronization: store_null (blocking);"));
}
