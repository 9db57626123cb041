// A cpu "device" for kernel tests without iris.init(): the cpu backend's executor, a registry, and
// fake rank heaps in this process (hb[r] points at rank r's; a kernel runs as `rank`), so device code
// that reaches another rank's heap runs here as it does across processes.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "iris/impl/abi.h"
#include "programs/registry.hpp"
#include "runtime/cpu/cpu_backend.hpp"

namespace iris::test {

// Where the tests' kernels are cached: IRIS_CACHE_DIR (ctest sets it), else a directory of this run.
inline std::string test_cache_dir() {
  const char* dir = std::getenv("IRIS_CACHE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp/iris-lua-unit-test-cache";
}

// The folder of the unit tests' kernels. From the build (tests/CMakeLists.txt), not __FILE__: with the
// build folder inside the source tree, __FILE__ is relative to the build folder, and ctest runs the
// program from another one.
inline std::string test_kernel_dir() { return IRIS_UNIT_TEST_KERNELS; }

struct CpuDevice {
  static constexpr size_t kHeapBytes = 1 << 20;

  std::unique_ptr<comm::Comm> comm = comm::Comm::create(nullptr, nullptr);
  runtime::CpuBackend backend{*comm};
  abi::DeviceMailbox mailbox{};
  std::vector<char*> heaps;
  uint64_t* heap_bases = nullptr;  // in the current rank's heap, at offset 0, as the heap layout has it
  std::unique_ptr<programs::Registry> registry;

  explicit CpuDevice(int world_size = 2, int rank = 0, programs::RegistryOptions options = default_options()) {
    for (int r = 0; r < world_size; ++r) {
      heaps.push_back(static_cast<char*>(std::aligned_alloc(4096, kHeapBytes)));
      std::memset(heaps.back(), 0, kHeapBytes);
    }
    heap_bases = reinterpret_cast<uint64_t*>(heaps[rank]);
    for (int r = 0; r < world_size; ++r) heap_bases[r] = reinterpret_cast<uint64_t>(heaps[r]);
    programs::DeviceContext device;
    device.backend = &backend;
    device.rank = rank;
    device.world_size = world_size;
    device.heap_bases = heap_bases;
    device.heap_base = heaps[rank];
    device.mailbox = {&mailbox, &mailbox, sizeof(mailbox)};
    backend.watch_mailbox(device.mailbox);
    registry = std::make_unique<programs::Registry>(device, options);
  }
  ~CpuDevice() {
    registry.reset();
    for (char* h : heaps) std::free(h);
  }

  static programs::RegistryOptions default_options() {
    programs::RegistryOptions o;
    o.cache_dir = test_cache_dir();
    o.wait_timeout_ns = 2'000'000'000;
    return o;
  }

  // Rank r's heap at byte offset `offset` (past the runtime's reserved 64 KiB by default).
  template <class T>
  T* at(int r, size_t offset = 64 * 1024) {
    return reinterpret_cast<T*>(heaps[r] + offset);
  }

  programs::Program& compile(const std::string& source, const std::string& origin = "test.lua:1") {
    return registry->compile(programs::ProgramSource{source, origin, "the snippet at " + origin, "snippet", {}, {}});
  }

  // Launches with the arguments' values; waits (the cpu backend ran it already) and reports faults.
  template <class... Args>
  void launch(programs::Kernel& kernel, runtime::Dim3 grid, runtime::Dim3 block, size_t shared, Args... args) {
    std::tuple<Args...> values(args...);
    void* pointers[sizeof...(Args) + 1];
    fill(values, pointers, std::index_sequence_for<Args...>{});
    runtime::LaunchConfig config;
    config.grid = grid;
    config.block = block;
    config.shared_bytes = shared;
    registry->launch(kernel, config, pointers);
    registry->synchronize();
  }

 private:
  template <class Tuple, size_t... I>
  static void fill(Tuple& values, void** pointers, std::index_sequence<I...>) {
    ((pointers[I] = &std::get<I>(values)), ...);
  }
};

// The message of the iris::Error `f` throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f, Errc* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code != nullptr) *code = e.code();
    return e.what();
  }
  return "";
}

}  // namespace iris::test
