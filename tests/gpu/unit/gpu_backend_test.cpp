// The code the cuda and hip backends share (src/runtime/gpu/gpu_backend.hpp, memory.hpp, execution.hpp),
// run without a GPU over a fake vendor API that records every call and fails the calls a test asks it
// to. The fake names its calls as the CUDA driver does, so each expected sequence below is the cuda
// backend's, as verified on H200s (hip::Api maps each call to its HIP twin). The device tests
// (tests/gpu/device) run the same code on a real GPU.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "iris/impl/abi.h"
#include "programs/registry.hpp"
#include "runtime/gpu/device_sharing.hpp"
#include "runtime/gpu/gpu_backend.hpp"
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/gpu/execution.hpp"
#include "runtime/gpu/graph.hpp"
#include "runtime/gpu/memory.hpp"
#include "runtime/pattern_fill.hpp"

using namespace iris;
using namespace iris::runtime;
using Catch::Matchers::Contains;
using Calls = std::vector<std::string>;

namespace {

constexpr int kSuccess = 0, kNotReady = 1, kNotFound = 2, kFault = 3, kInvalid = 7;

// The fake driver's state: the calls made so far, and the failures to answer with.
struct FakeDriver {
  Calls calls;
  std::map<std::string, int> fail_next;  // call -> the status its next call returns
  float elapsed_ms = 2.5f;
  int mps_enabled = 0;  // CU_DEVICE_ATTRIBUTE_MPS_ENABLED
  size_t graph_nodes = 2;  // what cuGraphGetNodes finds in a captured graph

  int answer(const char* call) {
    calls.push_back(call);
    auto failure = fail_next.find(call);
    if (failure == fail_next.end()) return kSuccess;
    const int status = failure->second;
    fail_next.erase(failure);
    return status;
  }
};

struct FakeIpcHandle {
  uint8_t bytes[64];
};

// The adaptor contract of cuda::Api and hip::Api (gpu_backend.hpp), over FakeDriver.
struct FakeApi {
  using Status = int;
  using Returned = gpu::Returned<int>;
  using Device = int;
  using Stream = void*;
  using Event = void*;
  using Module = int;
  using Function = void*;
  using IpcHandle = FakeIpcHandle;
  using FunctionAttribute = int;
  using Graph = void*;
  using GraphExec = void*;

  static constexpr const char* name = "fake";
  static constexpr const char* vendor_api = "FAKE";
  static constexpr const char* visibility_variable = "FAKE_VISIBLE_DEVICES";
  static constexpr Status success = kSuccess;
  static constexpr Status not_ready = kNotReady;
  static constexpr Status not_found = kNotFound;
  static constexpr bool dynamic_shared_opt_in = true;
  static constexpr bool processes_take_turns = true;
  static constexpr FunctionAttribute kernel_max_threads = 0;
  static constexpr FunctionAttribute kernel_static_shared = 1;
  static constexpr FunctionAttribute kernel_dynamic_shared_allowed = 2;

  FakeDriver& driver;

  static bool is_device_fault(Status status) { return status == kFault; }
  std::string error_text(Status status) const { return format("FAKE_ERROR_%d", status); }

  Returned call(const char* name) const { return {driver.answer(name), name}; }

  Returned stream_query(Stream) const { return call("cuStreamQuery"); }
  Returned event_query(Event) const { return call("cuEventQuery"); }
  Returned device_get(Device* device, int ordinal) const {
    *device = ordinal;
    return call("cuDeviceGet");
  }
  // GPU n sits on PCI bus n + 1.
  Returned device_pci_bus_id(char* id, int length, Device device) const {
    std::snprintf(id, length, "0000:%02d:00.0", device + 1);
    return call("cuDeviceGetPCIBusId");
  }
  Returned mps_enabled(int* enabled, Device) const {
    *enabled = driver.mps_enabled;
    return call("cuDeviceGetAttribute");
  }
  Returned mem_get_info(size_t* free_bytes, size_t* total_bytes) const {
    *free_bytes = size_t{1} << 30;
    *total_bytes = size_t{2} << 30;
    return call("cuMemGetInfo");
  }
  Returned mem_free(void*) const { return call("cuMemFree"); }
  Returned ipc_get_handle(IpcHandle* handle, void*) const {
    std::memset(handle->bytes, 0xab, sizeof handle->bytes);
    return call("cuIpcGetMemHandle");
  }
  Returned ipc_open_handle(void** device, const IpcHandle&) const {
    *device = reinterpret_cast<void*>(uintptr_t{0x7000000});
    return call("cuIpcOpenMemHandle");
  }
  Returned ipc_close_handle(void*) const { return call("cuIpcCloseMemHandle"); }
  Returned host_alloc_mapped(void** host, size_t bytes) const {
    *host = std::malloc(bytes);
    std::memset(*host, 0x5a, bytes);  // allocate_mapped_host must zero it
    return call("cuMemHostAlloc");
  }
  Returned host_device_pointer(void** device, void* host) const {
    *device = host;
    return call("cuMemHostGetDevicePointer");
  }
  Returned host_free(void* host) const {
    std::free(host);
    return call("cuMemFreeHost");
  }
  Returned copy_to_host(void*, const void*, size_t, Stream) const { return call("cuMemcpyDtoHAsync"); }
  Returned copy_from_host(void*, const void*, size_t, Stream) const { return call("cuMemcpyHtoDAsync"); }
  Returned copy_device(void*, const void*, size_t, Stream) const { return call("cuMemcpyDtoDAsync"); }
  Returned copy_any(void*, const void*, size_t, Stream) const { return call("cuMemcpyAsync"); }
  Returned memset8(void*, unsigned char, size_t, Stream) const { return call("cuMemsetD8Async"); }
  Returned memset16(void*, unsigned short, size_t, Stream) const { return call("cuMemsetD16Async"); }
  Returned memset32(void*, uint32_t, size_t, Stream) const { return call("cuMemsetD32Async"); }
  Returned module_unload(Module) const { return call("cuModuleUnload"); }
  Returned module_get_function(Function* function, Module, const char*) const {
    *function = reinterpret_cast<void*>(uintptr_t{0xf00});
    return call("cuModuleGetFunction");
  }
  Returned module_get_global(void** device, size_t* bytes, Module, const char*) const {
    *device = reinterpret_cast<void*>(uintptr_t{0x6000000});
    *bytes = 16;
    return call("cuModuleGetGlobal");
  }
  // A kernel of at most 1024 threads, no static shared memory, 48 KiB of dynamic shared memory allowed.
  Returned function_attribute(int* value, FunctionAttribute attribute, Function) const {
    static const int values[] = {1024, 0, 48 * 1024};
    *value = values[attribute];
    return call("cuFuncGetAttribute");
  }
  Returned set_max_dynamic_shared(Function, int) const { return call("cuFuncSetAttribute"); }
  // Launches on another stream than the backend's main one (nullptr here) say so.
  Returned launch_kernel(Function, const LaunchConfig&, Stream stream, void**) const {
    return call(stream == nullptr ? "cuLaunchKernel" : "cuLaunchKernel (second stream)");
  }
  Returned event_create(Event* event) const {
    *event = reinterpret_cast<void*>(uintptr_t{0xe0});
    return call("cuEventCreate");
  }
  Returned event_destroy(Event) const { return call("cuEventDestroy"); }
  Returned event_record(Event, Stream) const { return call("cuEventRecord"); }
  Returned event_elapsed_ms(float* ms, Event, Event) const {
    *ms = driver.elapsed_ms;
    return call("cuEventElapsedTime");
  }
  Returned event_create_for_order(Event* event) const {
    *event = reinterpret_cast<void*>(uintptr_t{0xe1});
    return call("cuEventCreate (no timing)");
  }
  Returned stream_wait_event(Stream, Event) const { return call("cuStreamWaitEvent"); }
  Returned stream_priority_range(int* least, int* greatest) const {
    *least = 0;
    *greatest = -5;
    return call("cuCtxGetStreamPriorityRange");
  }
  Returned stream_create_with_priority(Stream* stream, int priority) const {
    *stream = reinterpret_cast<void*>(uintptr_t{0x5f});
    return call(priority == -5 ? "cuStreamCreateWithPriority (highest)" : "cuStreamCreateWithPriority");
  }
  Returned stream_create(Stream* stream) const {
    *stream = reinterpret_cast<void*>(uintptr_t{0x5e});
    return call("cuStreamCreate");
  }
  Returned stream_destroy(Stream) const { return call("cuStreamDestroy"); }
  Returned begin_capture(Stream) const { return call("cuStreamBeginCapture"); }
  Returned end_capture(Stream, Graph* graph) const {
    *graph = reinterpret_cast<void*>(uintptr_t{0x9a});
    return call("cuStreamEndCapture");
  }
  Returned graph_nodes(Graph, size_t* count) const {
    *count = driver.graph_nodes;
    return call("cuGraphGetNodes");
  }
  Returned graph_instantiate(GraphExec* exec, Graph) const {
    *exec = reinterpret_cast<void*>(uintptr_t{0x9e});
    return call("cuGraphInstantiate");
  }
  Returned graph_launch(GraphExec, Stream) const { return call("cuGraphLaunch"); }
  Returned graph_exec_destroy(GraphExec) const { return call("cuGraphExecDestroy"); }
  Returned graph_destroy(Graph) const { return call("cuGraphDestroy"); }
};

}  // namespace

// Compiles every shared body for the fake, as cuda_backend.cpp and hip_backend.cpp do for theirs.
template class iris::runtime::gpu::GpuBackend<FakeApi>;

namespace {

const comm::Comm& one_rank() {
  static std::unique_ptr<comm::Comm> comm = [] {
    int argc = 0;
    char** argv = nullptr;
    return comm::Comm::create(&argc, &argv);
  }();
  return *comm;
}

// GPU 0 of two, "Fake GPU", with H200's launch limits. The vendor parts record themselves too.
class FakeBackend final : public gpu::GpuBackend<FakeApi> {
 public:
  explicit FakeBackend(FakeDriver& driver) : GpuBackend(FakeApi{driver}, one_rank()), driver_(driver) {
    device_ = 0;
    device_handle_ = 0;
    device_count_ = 2;
    device_name_ = "Fake GPU";
    limits_.max_threads_per_block = 1024;
    limits_.max_block[0] = limits_.max_block[1] = 1024;
    limits_.max_block[2] = 64;
    limits_.max_grid[0] = 2147483647u;
    limits_.max_grid[1] = limits_.max_grid[2] = 65535;
    limits_.max_shared_per_block = 227 * 1024;
  }

  CodeTarget code_target() const override { return CodeTarget{"none", "fake"}; }
  void* allocate_heap_memory(size_t bytes) override {
    driver_.calls.push_back("allocate heap memory");
    return bytes > (size_t(64) << 30) ? nullptr : reinterpret_cast<void*>(uintptr_t{0x1000000});
  }
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>&) override {
    return std::make_unique<gpu::LoadedModule<FakeApi>>(*this, 1);
  }
  void bind() override {}

 private:
  void reach_peer_gpu(int ordinal, int peer) override { driver_.calls.push_back(format("reach GPU %d", ordinal)); }
  FakeDriver& driver_;
};

LaunchConfig launch_config(unsigned block_x, size_t shared_bytes = 0) {
  LaunchConfig config;
  config.grid.x = 4;
  config.block.x = block_x;
  config.shared_bytes = shared_bytes;
  return config;
}

Calls repeated(const std::string& call, size_t times) { return Calls(times, call); }

Calls joined(std::initializer_list<Calls> parts) {
  Calls all;
  for (const Calls& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// `call` throws Error(code) with exactly `message`.
void check_error(const std::function<void()>& call, Errc code, const std::string& message) {
  try {
    call();
    FAIL("no error; expected: " + message);
  } catch (const Error& e) {
    CHECK(e.code() == code);
    CHECK(std::string(e.what()) == message);
  }
}

// A registry over `backend` (with the mailbox it needs), and a kernel of `module` for it to launch.
struct FakeRegistry {
  FakeRegistry(Backend& backend, programs::RegistryOptions options) : registry(device_of(backend), options) {}
  programs::DeviceContext device_of(Backend& backend) {
    programs::DeviceContext device;
    device.backend = &backend;
    device.mailbox = MappedHostBuffer{&mailbox, &mailbox, sizeof mailbox};
    return device;
  }
  abi::DeviceMailbox mailbox{};
  programs::Registry registry;
};

programs::Kernel kernel_of(Module& module, const std::string& label) {
  programs::Kernel kernel;
  kernel.label = label;
  kernel.module = &module;
  kernel.function = module.function("scale");
  return kernel;
}

}  // namespace

TEST_CASE("a launch asks the kernel's limits once, opts in above 48 KiB of shared memory once, then launches",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  CHECK(module->function("scale") == kernel);
  CHECK(driver.calls == Calls{"cuModuleGetFunction"});

  driver.calls.clear();
  backend.launch(*module, kernel, launch_config(256, 96 * 1024), nullptr, "scale (x.lua:1)");
  CHECK(driver.calls == joined({repeated("cuFuncGetAttribute", 3), {"cuFuncSetAttribute", "cuLaunchKernel"}}));

  driver.calls.clear();
  backend.launch(*module, kernel, launch_config(256, 96 * 1024), nullptr, "scale (x.lua:1)");
  backend.launch(*module, kernel, launch_config(256), nullptr, "scale (x.lua:1)");
  CHECK(driver.calls == Calls{"cuLaunchKernel", "cuLaunchKernel"});

  driver.calls.clear();
  backend.synchronize();
  module.reset();
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuStreamQuery", "cuModuleUnload"});
}

TEST_CASE("a launch beyond the limits is refused before the driver launches anything", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  driver.calls.clear();
  try {
    backend.launch(*module, kernel, launch_config(2048), nullptr, "scale (x.lua:1)");
    FAIL("a block of 2048 threads was launched");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::launch);
    CHECK(std::string(e.what()) == "launch of scale (x.lua:1): block.x = 2048 exceeds Fake GPU's limit of 1024");
  }
  CHECK(driver.calls == repeated("cuFuncGetAttribute", 3));
}

TEST_CASE("a launch the driver refuses is Error(launch) naming the kernel, its shape and the call", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  driver.fail_next["cuLaunchKernel"] = kInvalid;
  try {
    backend.launch(*module, kernel, launch_config(32), nullptr, "scale (x.lua:1)");
    FAIL("the refused launch did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::launch);
    CHECK(std::string(e.what()) == "launch of scale (x.lua:1) (grid {4,1,1}, block {32,1,1}, 0 B of dynamic shared "
                                   "memory): cuLaunchKernel returned FAKE_ERROR_7");
  }
  CHECK_FALSE(backend.faulted());
  CHECK_NOTHROW(backend.synchronize());
}

TEST_CASE("a device fault names the kernels in flight, sticks, and keeps every later call off the driver",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  backend.launch(*module, kernel, launch_config(32), nullptr, "first (a.lua:1)");
  backend.launch(*module, kernel, launch_config(32), nullptr, "first (a.lua:1)");
  driver.fail_next["cuLaunchKernel"] = kFault;
  const std::string expected =
      "device fault on GPU 0 (Fake GPU): FAKE_ERROR_3, reported by cuLaunchKernel; kernels launched since the last "
      "synchronization: first (a.lua:1) x2; the GPU context is unusable now, the job ends";
  try {
    backend.launch(*module, kernel, launch_config(32), nullptr, "second (a.lua:2)");
    FAIL("the fault did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::device_fault);
    CHECK(std::string(e.what()) == expected);
  }
  driver.calls.clear();
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { backend.synchronize(); },
           [&] { backend.launch(*module, kernel, launch_config(32), nullptr, "third"); },
           [&] { backend.copy_device(nullptr, nullptr, 16); },
           [&] { backend.create_event(); },
       }) {
    try {
      call();
      FAIL("a call after the fault went through");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::device_fault);
      CHECK(std::string(e.what()) == expected);
    }
  }
  module.reset();  // after a fault a module is not unloaded
  CHECK(driver.calls.empty());
}

TEST_CASE("a wait that reports a fault names the call that reported it", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  backend.launch(*module, module->function("spin"), launch_config(32), nullptr, "spin (b.lua:3)");
  driver.fail_next["cuStreamQuery"] = kFault;
  try {
    backend.synchronize();
    FAIL("the fault did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::device_fault);
    CHECK_THAT(e.what(), Contains("FAKE_ERROR_3, reported by cuStreamQuery; kernels launched since the last "
                                  "synchronization: spin (b.lua:3);"));
  }
}

// IRIS_LAUNCH_BLOCKING is the registry's (programs/registry.cpp): a backend never waits after a launch
// itself, so a blocking launch waits once.
TEST_CASE("IRIS_LAUNCH_BLOCKING=1 makes the registry wait once for each kernel right after its launch", "[unit][gpu]") {
  for (const bool blocking : {false, true}) {
    setenv("IRIS_LAUNCH_BLOCKING", "1", 1);  // what the backend would have read, were it its business
    FakeDriver driver;
    FakeBackend backend(driver);
    unsetenv("IRIS_LAUNCH_BLOCKING");
    programs::RegistryOptions options;
    options.launch_blocking = blocking;
    FakeRegistry fake(backend, options);
    programs::Registry& registry = fake.registry;
    auto module = backend.load_module({});
    programs::Kernel kernel = kernel_of(*module, "scale (x.lua:1)");
    backend.launch(*module, kernel.function, launch_config(32), nullptr, "warm-up");  // reads the kernel's limits
    CHECK(driver.calls.back() == "cuLaunchKernel");
    driver.calls.clear();
    registry.launch(kernel, launch_config(32), nullptr);
    CHECK(driver.calls == (blocking ? Calls{"cuLaunchKernel", "cuStreamQuery"} : Calls{"cuLaunchKernel"}));
  }
}

TEST_CASE("the raw-launch reference is a plain loop of launches between two events and one wait", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  driver.calls.clear();
  const double seconds = backend.time_raw_launches(*module, kernel, launch_config(32), nullptr, 3).device;
  CHECK(seconds == Approx(0.0025));
  CHECK(driver.calls == joined({repeated("cuFuncGetAttribute", 3),
                                {"cuEventCreate", "cuEventCreate", "cuEventRecord"},
                                repeated("cuLaunchKernel", 3),
                                {"cuEventRecord", "cuEventQuery", "cuEventElapsedTime", "cuStreamQuery",
                                 "cuEventDestroy", "cuEventDestroy"}}));
  try {
    backend.time_raw_launches(*module, kernel, launch_config(32), nullptr, 0);
    FAIL("0 iterations were timed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
  }
}

TEST_CASE("timing events must both be recorded before their interval is read", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto start = backend.create_event();
  auto stop = backend.create_event();
  start->record();
  CHECK_THROWS_WITH(stop->elapsed_ms_since(*start), Contains("not both recorded"));
  stop->record();
  driver.calls.clear();
  CHECK(stop->elapsed_ms_since(*start) == Approx(2.5));
  CHECK(driver.calls == Calls{"cuEventQuery", "cuEventElapsedTime"});
}

TEST_CASE("kernels and module variables are looked up by name, and absent ones are named", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  driver.fail_next["cuModuleGetFunction"] = kNotFound;
  try {
    module->function("nope");
    FAIL("an absent kernel was found");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK(std::string(e.what()) == "kernel 'nope' is not in this module (cuModuleGetFunction returned FAKE_ERROR_2)");
  }
  driver.fail_next["cuModuleGetGlobal"] = kNotFound;
  CHECK_THROWS_WITH(module->write_global("iris_state", "0123456789abcdef", 16),
                    "module variable 'iris_state' is not in this module (cuModuleGetGlobal returned FAKE_ERROR_2)");
  CHECK_THROWS_WITH(module->write_global("iris_state", "01234567", 8),
                    "module variable 'iris_state' is 16 bytes; 8 bytes were given");
  driver.calls.clear();
  module->write_global("iris_state", "0123456789abcdef", 16);
  CHECK(driver.calls == Calls{"cuModuleGetGlobal", "cuMemcpyHtoDAsync", "cuStreamQuery"});
}

TEST_CASE("copies and fills are enqueued, checked and waited for; a fill without a memset seeds and doubles",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  void* device = reinterpret_cast<void*>(uintptr_t{0x1000000});
  char host[64] = {};
  backend.copy_to_host(host, device, sizeof host);
  backend.copy_from_host(device, host, sizeof host);
  backend.copy_device(device, device, sizeof host);
  backend.copy_device(device, device, 0);  // nothing to copy: no call
  CHECK(driver.calls == Calls{"cuMemcpyDtoHAsync", "cuStreamQuery", "cuMemcpyHtoDAsync", "cuStreamQuery",
                              "cuMemcpyDtoDAsync", "cuStreamQuery"});

  // The host proxy's copies (another thread, a kernel in flight may wait for them): a stream of their
  // own, made once, polled; never the main stream, which the launched work is on.
  driver.calls.clear();
  backend.proxy_copy(host, device, sizeof host);
  backend.proxy_copy(device, host, sizeof host);
  backend.proxy_copy(device, host, 0);  // nothing to copy: no call
  CHECK(driver.calls == Calls{"cuStreamCreate", "cuMemcpyAsync", "cuStreamQuery", "cuMemcpyAsync", "cuStreamQuery"});
  // Beside such a proxy, a copy of the main thread waits for the launched work before it is enqueued.
  driver.calls.clear();
  backend.drain_before_copies(true);
  backend.copy_to_host(host, device, sizeof host);
  backend.drain_before_copies(false);
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuMemcpyDtoHAsync", "cuStreamQuery"});

  driver.fail_next["cuMemcpyDtoDAsync"] = kInvalid;
  try {
    backend.copy_device(device, device, 64);
    FAIL("the refused copy did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK(std::string(e.what()) ==
          "copying 64 B from GPU address 0x1000000 to 0x1000000: cuMemcpyDtoDAsync returned FAKE_ERROR_7");
  }

  driver.calls.clear();
  const uint16_t half = 0x1234;
  const uint64_t word = 0x0102030405060708ull;
  backend.fill(device, &half, sizeof half, 100);
  CHECK(driver.calls == Calls{"cuMemsetD16Async", "cuStreamQuery"});

  driver.calls.clear();
  const size_t count = 20000;  // 160000 bytes: a 64 KiB seed, then copies of what is written
  backend.fill(device, &word, sizeof word, count);
  const size_t seed = fill_seed(&word, sizeof word, count).size();
  const size_t copies = doubling_copies(seed, count * sizeof word).size();
  CHECK(copies == 2);
  CHECK(driver.calls ==
        joined({{"cuMemcpyHtoDAsync"}, repeated("cuMemcpyDtoDAsync", copies), {"cuStreamQuery"}}));
}

TEST_CASE("mapped host memory comes zeroed, and a mapping that fails frees what was allocated", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  MappedHostBuffer buffer = backend.allocate_mapped_host(256);
  CHECK(driver.calls == Calls{"cuMemHostAlloc", "cuMemHostGetDevicePointer"});
  CHECK(static_cast<unsigned char*>(buffer.host)[0] == 0);
  CHECK(static_cast<unsigned char*>(buffer.host)[255] == 0);
  backend.free_mapped_host(buffer);
  CHECK(buffer.host == nullptr);

  driver.calls.clear();
  driver.fail_next["cuMemHostGetDevicePointer"] = kInvalid;
  CHECK_THROWS_WITH(backend.allocate_mapped_host(256),
                    "mapping host memory into the GPU: cuMemHostGetDevicePointer returned FAKE_ERROR_7");
  CHECK(driver.calls == Calls{"cuMemHostAlloc", "cuMemHostGetDevicePointer", "cuMemFreeHost"});
}

TEST_CASE("the heap's memory is the vendor's; the shared code allocates it once, zeroes it and waits",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  CHECK(backend.allocate_heap(1 << 20) == reinterpret_cast<void*>(uintptr_t{0x1000000}));
  CHECK(driver.calls == Calls{"allocate heap memory", "cuMemsetD8Async", "cuStreamQuery"});
  CHECK_THROWS_WITH(backend.allocate_heap(1 << 20), "the symmetric heap is allocated once per backend");
}

TEST_CASE("a heap is exported with its GPU's bus id, and a peer's is found by bus id, reached and opened",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  backend.allocate_heap(1 << 20);
  driver.calls.clear();
  const std::vector<uint8_t> mine = backend.export_heap();
  CHECK(driver.calls == Calls{"cuIpcGetMemHandle", "cuDeviceGetPCIBusId"});
  const gpu::HeapHandle exported = gpu::decode_heap_handle(mine, "fake", 0);
  CHECK(exported.pci_bus_id == "0000:01:00.0");
  CHECK(exported.bytes == (1u << 20));

  // Its own heap needs no mapping.
  driver.calls.clear();
  CHECK(backend.import_peer_heap(0, 0, mine, 1 << 20) == reinterpret_cast<void*>(uintptr_t{0x1000000}));
  CHECK(driver.calls.empty());

  // Rank 1's heap on GPU 1 (bus 2): found on the second ordinal, reached, then opened; once.
  gpu::HeapHandle theirs = exported;
  theirs.pci_bus_id = "0000:02:00.0";
  const std::vector<uint8_t> handle = gpu::encode_heap_handle(theirs);
  void* peer_base = backend.import_peer_heap(1, 1, handle, 1 << 20);
  CHECK(peer_base == reinterpret_cast<void*>(uintptr_t{0x7000000}));
  CHECK(backend.import_peer_heap(1, 1, handle, 1 << 20) == peer_base);
  CHECK(driver.calls == Calls{"cuDeviceGet", "cuDeviceGetPCIBusId", "cuDeviceGet", "cuDeviceGetPCIBusId",
                              "reach GPU 1", "cuIpcOpenMemHandle"});

  // A GPU this process does not see is refused before the driver opens anything.
  theirs.pci_bus_id = "0000:09:00.0";
  CHECK_THROWS_WITH(backend.import_peer_heap(2, 0, gpu::encode_heap_handle(theirs), 1 << 20),
                    Contains("rank 2's heap is on the GPU at PCI bus 0000:09:00.0, which this rank does not see "
                             "(FAKE_VISIBLE_DEVICES"));

  driver.calls.clear();
  backend.release_heaps();
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuIpcCloseMemHandle", "cuMemFree"});
}

TEST_CASE("releasing the heaps reports every close and free that failed", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  backend.allocate_heap(1 << 20);
  gpu::HeapHandle theirs = gpu::decode_heap_handle(backend.export_heap(), "fake", 0);
  theirs.pci_bus_id = "0000:02:00.0";
  backend.import_peer_heap(1, 1, gpu::encode_heap_handle(theirs), 1 << 20);
  driver.fail_next["cuIpcCloseMemHandle"] = kInvalid;
  driver.fail_next["cuMemFree"] = kInvalid;
  try {
    backend.release_heaps();
    FAIL("failed releases did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::internal);
    CHECK(std::string(e.what()) ==
          "releasing the heaps on GPU 0; closing rank 1's heap: cuIpcCloseMemHandle returned FAKE_ERROR_7; freeing "
          "the heap: cuMemFree returned FAKE_ERROR_7");
  }
}

TEST_CASE("a heap too large for the GPU says how much is free", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  try {
    backend.allocate_heap(size_t{100} << 30);  // the fake vendor has no room for more than 64 GiB
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    CHECK(std::string(e.what()) ==
          "cannot allocate a 100 GiB symmetric heap on GPU 0 (Fake GPU): 1 GiB free of 2 GiB (ranks sharing this "
          "GPU hold a heap each); ask for less with iris.init{heap_size=} or IRIS_HEAP_SIZE");
  }
  CHECK(driver.calls == Calls{"allocate heap memory", "cuMemGetInfo"});
}

TEST_CASE("ranks sharing a GPU are told to start MPS unless the driver or a running daemon says it serves them",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  CHECK(backend.device_identity() == "0000:01:00.0");
  // An MPS control daemon's pipe, in a directory of this test.
  char dir[] = "/tmp/iris-mps-test-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
  const std::string pipe = std::string(dir) + "/control";

  driver.calls.clear();
  driver.mps_enabled = 0;
  CHECK_THAT(backend.shared_device_advice(), Contains("CUDA MPS is not running") && Contains("nvidia-cuda-mps-control -d"));
  CHECK(driver.calls == Calls{"cuDeviceGetAttribute"});
  driver.mps_enabled = 1;
  CHECK(backend.shared_device_advice() == "");
  // A driver that does not know the attribute: the daemon's pipe decides.
  driver.fail_next["cuDeviceGetAttribute"] = kInvalid;
  CHECK_FALSE(backend.shared_device_advice().empty());
  REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
  driver.fail_next["cuDeviceGetAttribute"] = kInvalid;
  CHECK(backend.shared_device_advice() == "");
  unlink(pipe.c_str());
  rmdir(dir);
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

TEST_CASE("the shared-GPU warning names which ranks share which GPU, once, and only when sharing costs",
          "[unit][gpu]") {
  using gpu::shared_device_warning;
  const std::string advice = gpu::mps_advice();
  const std::vector<std::string> names(4, "NVIDIA H200");
  // 4 ranks on 2 GPUs, round robin, no MPS.
  const std::string both = shared_device_warning({"0000:3b:00.0", "0000:5c:00.0", "0000:3b:00.0", "0000:5c:00.0"},
                                                 names, {advice, advice, advice, advice});
  CHECK(both == "ranks 0 and 2 share GPU 0000:3b:00.0 (NVIDIA H200); ranks 1 and 3 share GPU 0000:5c:00.0 (NVIDIA "
                "H200), and " + advice);
  CHECK_THAT(shared_device_warning({"0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0"}, names, {advice, advice, advice}),
             Catch::StartsWith("ranks 0, 1 and 2 share GPU 0000:3b:00.0 (NVIDIA H200), and CUDA MPS is not running"));
  // Under MPS, on separate GPUs, or on the cpu backend: nothing to say.
  CHECK(shared_device_warning({"0000:3b:00.0", "0000:3b:00.0"}, names, {"", ""}) == "");
  CHECK(shared_device_warning({"0000:3b:00.0", "0000:5c:00.0"}, names, {advice, advice}) == "");
  CHECK(shared_device_warning({"", "", ""}, names, {"", "", ""}) == "");
}

TEST_CASE("IRIS_SHARED_GPU_WARNING=0 silences the shared-GPU warning; the warning says so", "[unit][gpu]") {
  CHECK_THAT(gpu::mps_advice(), Catch::EndsWith("IRIS_SHARED_GPU_WARNING=0 silences this warning"));
  unsetenv("IRIS_SHARED_GPU_WARNING");
  CHECK(gpu::shared_device_warning_wanted());
  setenv("IRIS_SHARED_GPU_WARNING", "1", 1);
  CHECK(gpu::shared_device_warning_wanted());
  setenv("IRIS_SHARED_GPU_WARNING", "0", 1);
  CHECK_FALSE(gpu::shared_device_warning_wanted());
  setenv("IRIS_SHARED_GPU_WARNING", "no", 1);
  CHECK_THROWS_WITH(gpu::shared_device_warning_wanted(), "IRIS_SHARED_GPU_WARNING must be 0 or 1, got 'no'");
  unsetenv("IRIS_SHARED_GPU_WARNING");
}

TEST_CASE("the MPS decision: the driver's word when it has one, else the control daemon's pipe", "[unit][gpu]") {
  using gpu::cuda_runs_processes_side_by_side;
  CHECK(cuda_runs_processes_side_by_side(true, 1, false));
  CHECK_FALSE(cuda_runs_processes_side_by_side(true, 0, true));  // a daemon serving another user or GPU
  CHECK(cuda_runs_processes_side_by_side(false, 0, true));
  CHECK_FALSE(cuda_runs_processes_side_by_side(false, 0, false));
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/somewhere/mps", 1);
  CHECK(gpu::mps_control_pipe() == "/somewhere/mps/control");
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  CHECK(gpu::mps_control_pipe() == "/tmp/nvidia-mps/control");
}

// --- graphs (ctx:capture; gpu/graph.hpp) -----------------------------------------------------------------

TEST_CASE("a capture is a stream capture of the backend's stream, instantiated and launched there", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  driver.calls.clear();
  backend.begin_capture();
  CHECK(backend.capturing());
  // Earlier work is waited for (its faults belong to it), then the stream is captured.
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuStreamCreate", "cuStreamBeginCapture"});
  driver.calls.clear();
  backend.capture_launch(*module, kernel, launch_config(32), nullptr, {4, 8}, "scale (x.lua:2)");
  backend.capture_launch(*module, kernel, launch_config(32), nullptr, {4, 8}, "scale (x.lua:2)");
  CHECK(driver.calls == joined({repeated("cuFuncGetAttribute", 3), repeated("cuLaunchKernel", 2)}));
  driver.calls.clear();
  std::unique_ptr<Graph> graph = backend.end_capture("the graph captured at x.lua:1");
  CHECK_FALSE(backend.capturing());
  CHECK(graph->kernels() == 2);
  CHECK(driver.calls == Calls{"cuStreamEndCapture", "cuGraphGetNodes", "cuGraphInstantiate", "cuGraphDestroy"});
  driver.calls.clear();
  graph->launch(3);
  graph->launch(0);
  CHECK(driver.calls == repeated("cuGraphLaunch", 3));
  CHECK(backend.kernels_in_flight() == "the graph captured at x.lua:1");
  driver.calls.clear();
  backend.synchronize();
  graph.reset();
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuGraphExecDestroy"});
  // The second stream is made once.
  driver.calls.clear();
  backend.begin_capture();
  backend.abort_capture();
  CHECK(driver.calls == Calls{"cuStreamQuery", "cuStreamBeginCapture", "cuStreamEndCapture", "cuGraphDestroy"});
  CHECK_FALSE(backend.capturing());
}

TEST_CASE("while the stream is captured, what waits for the device is refused before the driver sees it",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  auto event = backend.create_event();
  backend.begin_capture();
  driver.calls.clear();
  const std::vector<std::pair<std::string, std::function<void()>>> waiting = {
      {"copying device memory to the host", [&] { backend.copy_to_host(nullptr, nullptr, 4); }},
      {"copying host memory to the device", [&] { backend.copy_from_host(nullptr, nullptr, 4); }},
      {"copying device memory", [&] { backend.copy_device(nullptr, nullptr, 4); }},
      {"filling device memory", [&] { uint32_t v = 1; backend.fill(nullptr, &v, 4, 4); }},
      {"waiting for the GPU", [&] { backend.synchronize(); }},
      {"timing raw launches", [&] { backend.time_raw_launches(*module, kernel, launch_config(32), nullptr, 2); }},
      {"recording a timing event", [&] { event->record(); }},
  };
  for (const auto& [what, call] : waiting) {
    check_error(call, Errc::invalid_argument,
                what + " cannot run while ctx:capture(fn) records launches: it waits for the device, whose work does "
                       "not run until the graph is replayed; do it before or after the capture");
  }
  CHECK(driver.calls.empty());
  CHECK(backend.capturing());  // the capture goes on
  std::unique_ptr<Graph> graph = backend.end_capture("g");
  backend.begin_capture();
  CHECK_THROWS_WITH(graph->launch(1), Contains("replaying a graph cannot run while ctx:capture(fn) records"));
  backend.abort_capture();
}

TEST_CASE("a module loaded during a capture writes its variables through the second stream", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  backend.begin_capture();
  auto module = backend.load_module({});
  driver.calls.clear();
  const uint8_t state[16] = {};
  module->write_global("__iris_module_state", state, sizeof state);
  CHECK(driver.calls == Calls{"cuModuleGetGlobal", "cuMemcpyHtoDAsync", "cuStreamQuery"});
  backend.abort_capture();
  driver.calls.clear();
  module->write_global("__iris_module_state", state, sizeof state);  // through the stream again
  CHECK(driver.calls == Calls{"cuModuleGetGlobal", "cuMemcpyHtoDAsync", "cuStreamQuery"});
}

TEST_CASE("a capture the driver invalidated is Error(launch) naming it, and leaves the backend usable",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  backend.begin_capture();
  driver.fail_next["cuStreamEndCapture"] = kInvalid;
  check_error([&] { backend.end_capture("the graph captured at y.lua:4"); }, Errc::launch,
              "ending the capture of the stream (the graph captured at y.lua:4): cuStreamEndCapture returned "
              "FAKE_ERROR_7");
  CHECK_FALSE(backend.capturing());
  CHECK_NOTHROW(backend.synchronize());
  backend.begin_capture();
  driver.fail_next["cuGraphInstantiate"] = kInvalid;
  CHECK_THROWS_WITH(backend.end_capture("g"), Contains("making the captured graph runnable (g): cuGraphInstantiate"));
  CHECK(driver.calls.back() == "cuGraphDestroy");  // the captured graph is released either way
}

TEST_CASE("a fault after a replay names the graph among the work in flight", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  backend.begin_capture();
  std::unique_ptr<Graph> graph = backend.end_capture("the graph captured at z.lua:9");
  graph->launch(2);
  driver.fail_next["cuStreamQuery"] = kFault;
  CHECK_THROWS_WITH(backend.synchronize(),
                    Contains("kernels launched since the last synchronization: the graph captured at z.lua:9;"));
  CHECK(backend.faulted());
  driver.calls.clear();
  graph.reset();  // after a fault nothing more reaches the driver
  CHECK(driver.calls.empty());
}

TEST_CASE("the registry records launches while capturing, holds the graph, replays and frees it", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  FakeRegistry fake(backend, programs::RegistryOptions{});
  programs::Registry& registry = fake.registry;
  auto module = backend.load_module({});
  programs::Kernel kernel = kernel_of(*module, "scale (x.lua:1)");
  registry.begin_capture();
  CHECK_THROWS_WITH(registry.begin_capture(), Contains("a capture is already in progress on this rank"));
  registry.launch(kernel, launch_config(32), nullptr);
  CHECK(backend.kernels_in_flight().empty());  // recorded, not in flight
  Graph& graph = registry.end_capture("the graph captured at x.lua:3");
  driver.calls.clear();
  registry.replay(graph, 4);
  CHECK(driver.calls == repeated("cuGraphLaunch", 4));
  registry.free_graph(graph);
  CHECK(driver.calls.back() == "cuGraphExecDestroy");
  CHECK_THROWS_WITH(registry.free_graph(graph), Contains("a graph this rank's registry does not hold"));
}

TEST_CASE("the second stream: a fork and a join are events the streams wait for, never a host wait", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  backend.launch(*module, kernel, launch_config(256), nullptr, "a (x.lua:1)");
  driver.calls.clear();

  backend.stream_wait(1);  // fork: the second stream waits for the main one's work so far
  backend.select_stream(1);
  CHECK(backend.native_stream() != nullptr);  // the vendor libraries' work goes there too
  backend.launch(*module, kernel, launch_config(256), nullptr, "b (x.lua:2)");
  backend.select_stream(0);
  CHECK(backend.native_stream() == nullptr);
  backend.launch(*module, kernel, launch_config(256), nullptr, "c (x.lua:3)");
  backend.stream_wait(0);  // join: the main stream waits for the second's work so far
  backend.launch(*module, kernel, launch_config(256), nullptr, "d (x.lua:4)");
  CHECK(driver.calls == Calls{"cuCtxGetStreamPriorityRange", "cuStreamCreateWithPriority (highest)", "cuEventCreate (no timing)",
                              "cuEventCreate (no timing)",
                              "cuEventRecord", "cuStreamWaitEvent", "cuLaunchKernel (second stream)", "cuLaunchKernel",
                              "cuEventRecord", "cuStreamWaitEvent", "cuLaunchKernel"});

  // Joined already: waiting polls the main stream alone.
  driver.calls.clear();
  backend.synchronize();
  CHECK(driver.calls == Calls{"cuStreamQuery"});
}

TEST_CASE("work left on the second stream joins the main stream before a copy, a timing event or a wait",
          "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  backend.stream_wait(1);
  backend.select_stream(1);
  backend.launch(*module, kernel, launch_config(256), nullptr, "b (x.lua:2)");
  backend.select_stream(0);
  driver.calls.clear();
  int value = 0;
  backend.copy_to_host(&value, reinterpret_cast<void*>(uintptr_t{0x1000}), sizeof value);
  CHECK(driver.calls == Calls{"cuEventRecord", "cuStreamWaitEvent", "cuMemcpyDtoHAsync", "cuStreamQuery"});

  // Still selected: every wait joins first (the work enqueued meanwhile is on the second stream).
  backend.select_stream(1);
  driver.calls.clear();
  auto start = backend.create_event();
  start->record();
  backend.synchronize();
  CHECK(driver.calls == Calls{"cuEventCreate", "cuEventRecord", "cuStreamWaitEvent", "cuEventRecord", "cuEventRecord",
                              "cuStreamWaitEvent", "cuStreamQuery"});
  backend.select_stream(0);
  CHECK_THROWS_WITH(backend.select_stream(2), Contains("stream 0 or 1"));
}

TEST_CASE("a capture that forked onto the second stream ends joined", "[unit][gpu]") {
  FakeDriver driver;
  FakeBackend backend(driver);
  auto module = backend.load_module({});
  void* kernel = module->function("scale");
  backend.begin_capture();
  driver.calls.clear();
  backend.stream_wait(1);
  backend.select_stream(1);
  backend.capture_launch(*module, kernel, launch_config(256), nullptr, {}, "b (x.lua:2)");
  auto graph = backend.end_capture("the graph captured at x.lua:1");
  CHECK(driver.calls == joined({{"cuCtxGetStreamPriorityRange", "cuStreamCreateWithPriority (highest)", "cuEventCreate (no timing)",
                                 "cuEventCreate (no timing)",
                                 "cuEventRecord", "cuStreamWaitEvent"},
                                repeated("cuFuncGetAttribute", 3),
                                {"cuLaunchKernel (second stream)", "cuEventRecord", "cuStreamWaitEvent",
                                 "cuStreamEndCapture", "cuGraphGetNodes", "cuGraphInstantiate", "cuGraphDestroy"}}));
  CHECK(backend.native_stream() == nullptr);  // the capture's end selects the main stream again
}
