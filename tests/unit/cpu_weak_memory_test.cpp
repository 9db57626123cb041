// The cpu backend's weak memory model (IRIS_CPU_MEMORY_MODEL=weak): stores to other ranks' heaps wait
// in per-thread store buffers, so a missing release shows; releases, forwarding and per-address order
// keep correct programs correct.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/files.hpp"
#include "kernel_test_support.hpp"
#include "runtime/cpu/cpu_store_buffer.hpp"

using iris::Errc;
using iris::runtime::Dim3;
using iris::runtime::cpu::Random;
using iris::runtime::cpu::StoreBuffer;
using iris::test::CpuDevice;
using iris::test::error_of;

namespace {

// Sets an environment variable for a scope (the cpu compiler reads IRIS_CPU_MEMORY_MODEL when a
// registry creates it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

// A cpu device whose kernels are built for the weak memory model, playing rank 0 of two.
struct WeakDevice {
  ScopedEnv model{"IRIS_CPU_MEMORY_MODEL", "weak"};
  CpuDevice device;
  iris::abi::ContextData context{device.heap_bases, 0, 2};
};

const char* kMessages = R"(
__device__ int value(int i) { return 1000 + i; }

// In one block, thread 0 sends n values to rank 1 and raises rank 1's flag; thread 1 plays rank 1's
// consumer (this process holds both heaps) and counts what it finds stale once it sees the flag.
// The threads run one after another, so thread 1 runs after thread 0 returned.
__global__ void message(int* inbox, int* flag, int* stale, int n, int release, iris::Context ctx) {
  int* remote_inbox = ctx.translate(inbox, 1);
  const int* remote_flag = ctx.translate(flag, 1);
  if (threadIdx.x == 0) {
    for (int i = 0; i < n; ++i) ctx.store(inbox + i, value(i), 1);
    if (release) ctx.signal_set(flag, 1, 1); else ctx.atomic_xchg(flag, 1, 1, iris::relaxed);
  } else {
    iris::wait_until(remote_flag, iris::Cmp::eq, 1);
    int count = 0;
    for (int i = 0; i < n; ++i) count += remote_inbox[i] != value(i);
    *stale = count;
  }
}

// One thread's view of its own buffered stores: loads through the API see them, an atomic on the same
// address acts after them, and later stores to the same address win.
__global__ void own_view(int* slot, int* out, iris::Context ctx) {
  ctx.store(slot, 5, 1);
  out[0] = ctx.load(slot, 1);                        // forwarded from the buffer
  out[1] = ctx.atomic_add(slot, 1, 1, iris::relaxed);  // sees 5, leaves 6
  ctx.store(slot + 1, 7, 1);
  ctx.store(slot + 1, 8, 1);
  int64_t pair = 0;
  ctx.get(reinterpret_cast<const int64_t*>(slot), &pair, 1);  // both halves as this thread wrote them
  out[2] = static_cast<int>(pair & 0xffffffff);
  out[3] = static_cast<int>(pair >> 32);
}
)";

}  // namespace

TEST_CASE("a store buffer forwards, coalesces and keeps each address's stores in order", "[unit][cpu][weak]") {
  std::vector<unsigned char> memory(64, 0);
  StoreBuffer buffer;
  const uint32_t a = 0x11111111, b = 0x22222222, c = 0x33333333;
  buffer.store(&memory[0], &a, 4);
  buffer.store(&memory[8], &b, 4);
  buffer.store(&memory[0], &c, 4);  // the same bytes: replaces the pending 0x11111111
  CHECK(buffer.size() == 2);
  CHECK(memory[0] == 0);  // nothing visible yet
  uint64_t seen = 0;
  buffer.read(&seen, &memory[0], 8);
  CHECK(seen == 0x33333333u);
  // A store over part of a pending one sends the older one to memory first.
  const uint16_t d = 0x4444;
  buffer.store(&memory[10], &d, 2);
  uint32_t in_memory;
  std::memcpy(&in_memory, &memory[8], 4);
  CHECK(in_memory == 0x22222222u);
  buffer.commit_overlapping(&memory[2], 1);
  std::memcpy(&in_memory, &memory[0], 4);
  CHECK(in_memory == 0x33333333u);
  // Whatever order they drain in, memory ends as the program wrote it.
  for (uint64_t seed = 1; seed < 50; ++seed) {
    std::vector<unsigned char> mem(256, 0), expected(256, 0);
    StoreBuffer buf;
    Random random(seed);
    for (int k = 0; k < 200; ++k) {
      const size_t at = random.below(240), bytes = 1 + random.below(16);
      std::vector<unsigned char> data(bytes);
      for (auto& x : data) x = static_cast<unsigned char>(random.next());
      buf.store(&mem[at], data.data(), bytes);
      std::memcpy(&expected[at], data.data(), bytes);
      if (random.below(5) == 0) buf.commit_one(random);
    }
    std::vector<unsigned char> view(256);
    buf.read(view.data(), mem.data(), 256);
    CHECK(view == expected);  // the thread sees its own stores
    buf.commit_all(random);
    REQUIRE(mem == expected);
  }
}

TEST_CASE("in the weak model a flag raised without release overtakes the data; a release never", "[unit][cpu][weak]") {
  WeakDevice weak;
  CpuDevice& device = weak.device;
  auto& k = device.compile(kMessages).kernel("message");
  int* inbox = device.at<int>(0);
  int* flag = device.at<int>(0, 128 * 1024);
  int* stale = device.at<int>(0, 192 * 1024);
  int* remote_flag = device.at<int>(1, 128 * 1024);
  int* remote_inbox = device.at<int>(1);
  for (int release = 0; release < 2; ++release) {
    *remote_flag = 0;
    std::memset(remote_inbox, 0, 64 * sizeof(int));
    *stale = -1;
    device.launch(k, Dim3{1, 1, 1}, Dim3{2, 1, 1}, 0, inbox, flag, stale, 64, release, weak.context);
    INFO("release " << release);
    if (release) {
      CHECK(*stale == 0);
    } else {
      CHECK(*stale > 0);
    }
    // At the kernel's end every store is visible.
    for (int i = 0; i < 64; ++i) REQUIRE(remote_inbox[i] == 1000 + i);
  }
}

TEST_CASE("in the weak model a thread sees its own stores in program order", "[unit][cpu][weak]") {
  WeakDevice weak;
  CpuDevice& device = weak.device;
  int* slot = device.at<int>(0);
  int* out = device.at<int>(0, 128 * 1024);
  device.launch(device.compile(kMessages).kernel("own_view"), Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, slot, out, weak.context);
  CHECK(out[0] == 5);
  CHECK(out[1] == 5);
  CHECK(out[2] == 6);
  CHECK(out[3] == 8);
  CHECK(device.at<int>(1)[0] == 6);
  CHECK(device.at<int>(1)[1] == 8);
}

TEST_CASE("the weak model compiles every call of the device header", "[unit][cpu][weak]") {
  WeakDevice weak;
  const std::string source =
      iris::compiler::read_text_file(iris::test::test_kernel_dir() + "/header_coverage.hip");
  CHECK(error_of([&] { weak.device.compile(source).kernel("header_coverage"); }) == "");
}

TEST_CASE("an unknown IRIS_CPU_MEMORY_MODEL is an environment error naming the choices", "[unit][cpu][weak]") {
  ScopedEnv model("IRIS_CPU_MEMORY_MODEL", "relaxed");
  CpuDevice device;
  Errc code{};
  CHECK_THAT(error_of([&] { device.compile("__global__ void k() {}"); }, &code),
             Catch::Contains("IRIS_CPU_MEMORY_MODEL must be tso or weak, got 'relaxed'"));
  CHECK(code == Errc::environment);
}
