// The cpu backend runs kernels with GPU semantics: thread geometry, barriers, shared memory, atomics,
// waits, and faults that become errors instead of crashes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

#include "kernel_test_support.hpp"

using iris::Errc;
using iris::runtime::Dim3;
using iris::test::CpuDevice;
using iris::test::error_of;

namespace {

const char* kModel = R"(
__global__ void geometry(uint32_t* out) {
  const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const uint32_t threads = blockDim.x * blockDim.y * blockDim.z;
  out[block * threads + thread] = block * 1000 + thread;
}

// Every thread writes its slot, then reads its neighbour's: wrong without a real barrier.
__global__ void rotate(int* out) {
  __shared__ int tile[256];
  tile[threadIdx.x] = static_cast<int>(threadIdx.x) + 1000 * static_cast<int>(blockIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

// A tree reduction: log2(n) barriers, shared memory reused between them.
__global__ void block_sum(const float* in, float* out) {
  extern __shared__ float partial[];
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

__global__ void count(unsigned long long* counter, int* relaxed_counter, float* sum) {
  iris::atomic_add(counter, 1ull, 0, 0, nullptr);
  atomicAdd(relaxed_counter, 1);
  atomicAdd(sum, 0.5f);
}

// Thread 0 waits for a flag thread 31 raises: only works if the waiting thread lets the others run.
__global__ void handoff(int* flag, int* data, int* seen) {
  if (threadIdx.x == 0) {
    iris::wait_until(flag, iris::Cmp::eq, 1);
    *seen = *data;
  } else if (threadIdx.x == 31) {
    *data = 42;
    iris::signal_set(flag, 1, 0, 0, nullptr);
  }
}

__global__ void hip_spelling(int* out) {
  out[hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x] = static_cast<int>(hipGridDim_x);
}
)";

}  // namespace

TEST_CASE("the cpu executor gives every thread its own indices in 3-D grids and blocks", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("geometry");
  const Dim3 grid{3, 2, 2}, block{4, 3, 2};
  uint32_t* out = device.at<uint32_t>(0);
  device.launch(k, grid, block, 0, out);
  const uint32_t blocks = 12, threads = 24;
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < threads; ++t) REQUIRE(out[b * threads + t] == b * 1000 + t);
  }
}

TEST_CASE("__syncthreads is a real barrier and __shared__ memory is per block", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("rotate");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{8, 1, 1}, Dim3{256, 1, 1}, 0, out);
  for (int b = 0; b < 8; ++b) {
    for (int t = 0; t < 256; ++t) REQUIRE(out[b * 256 + t] == (t + 1) % 256 + 1000 * b);
  }
}

TEST_CASE("dynamic shared memory (extern __shared__) holds a block's reduction across barriers", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("block_sum");
  float* in = device.at<float>(0);
  float* out = device.at<float>(0, 512 * 1024);
  for (int i = 0; i < 16 * 128; ++i) in[i] = static_cast<float>(i % 7);
  device.launch(k, Dim3{16, 1, 1}, Dim3{128, 1, 1}, 128 * sizeof(float), static_cast<const float*>(in), out);
  for (int b = 0; b < 16; ++b) {
    float expected = 0;
    for (int i = 0; i < 128; ++i) expected += static_cast<float>((b * 128 + i) % 7);
    REQUIRE(out[b] == expected);
  }
}

TEST_CASE("atomics from threads of many blocks running in parallel lose no update", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("count");
  auto* counter = device.at<unsigned long long>(0);
  auto* relaxed = device.at<int>(0, 128 * 1024);
  auto* sum = device.at<float>(0, 192 * 1024);
  device.launch(k, Dim3{64, 1, 1}, Dim3{256, 1, 1}, 0, counter, relaxed, sum);
  CHECK(*counter == 64 * 256);
  CHECK(*relaxed == 64 * 256);
  CHECK(*sum == 64 * 256 * 0.5f);
}

TEST_CASE("a thread spinning in wait_until lets the other threads of its block run", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("handoff");
  int* flag = device.at<int>(0);
  int* data = flag + 16;
  int* seen = flag + 32;
  device.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, flag, data, seen);
  CHECK(*seen == 42);
}

TEST_CASE("HIP's spellings of the thread geometry work on the cpu backend", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(kModel).kernel("hip_spelling");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{5, 1, 1}, Dim3{32, 1, 1}, 0, out);
  CHECK(out[0] == 5);
  CHECK(out[5 * 32 - 1] == 5);
}

TEST_CASE("a bad address in a kernel is a device fault naming kernel, rank, address and thread", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(R"(
    __global__ void poke(int* p) { if (threadIdx.x == 3 && blockIdx.x == 1) p[0] = 1; }
  )").kernel("poke");
  Errc code{};
  const std::string message =
      error_of([&] { device.launch(k, Dim3{2, 1, 1}, Dim3{8, 1, 1}, 0, reinterpret_cast<int*>(16)); }, &code);
  CHECK(code == Errc::device_fault);
  CHECK_THAT(message, Catch::Contains("device fault in kernel poke (test.lua:1) on rank 0"));
  CHECK_THAT(message, Catch::Contains("illegal address 0x10 (SIGSEGV)"));
  CHECK_THAT(message, Catch::Contains("block (1,0,0) thread (3,0,0)"));
  // The device stays faulted, as a GPU context does: the next launch reports the same fault.
  CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, device.at<int>(0)); }),
             Catch::Contains("illegal address"));
}

TEST_CASE("assert, __trap and integer division by zero in a kernel are device faults", "[unit][cpu]") {
  const char* source = R"(
    __global__ void checks(int* p, int which) {
      if (which == 0) assert(p[0] == 12345);
      if (which == 1) __trap();
      if (which == 2) p[1] = 7 / p[2];
    }
  )";
  const char* expected[] = {"assertion 'p[0] == 12345' failed at snippet:3", "__trap() called", "SIGFPE"};
  for (int which = 0; which < 3; ++which) {
    CpuDevice device;
    auto& k = device.compile(source).kernel("checks");
    CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, device.at<int>(0), which); }),
               Catch::Contains(expected[which]));
  }
}

TEST_CASE("a wait that never completes becomes a fault naming rank, address, expected and last value", "[unit][cpu]") {
  auto options = CpuDevice::default_options();
  options.wait_timeout_ns = 200'000'000;
  CpuDevice device(2, 1, options);
  auto& k = device.compile(R"(
    __global__ void stuck(int* flag) { iris::wait_until(flag, iris::Cmp::ge, 3); }
  )").kernel("stuck");
  int* flag = device.at<int>(1);
  *flag = 2;
  const std::string message = error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, flag); });
  CHECK_THAT(message, Catch::StartsWith("device fault in kernel stuck (test.lua:1) on rank "));
  // The device code's rank (1 here: this process plays rank 1) wrote the report.
  // The wait names its call: the snippet's second line (the first is empty).
  CHECK_THAT(message, Catch::Contains("wait_until at "));
  CHECK_THAT(message, Catch::Contains(iris::format(":2 on rank 1 gave up after 0.2 s: address %p held 2, "
                                                   "waited for a value >= 3 (iris::Cmp::ge) in block (0,0,0) thread (0,0,0)",
                                                   static_cast<void*>(flag))));
  CHECK(device.mailbox.failed == 2);  // claimed, then written
  CHECK(device.mailbox.rank == 1);
  CHECK(device.mailbox.address == reinterpret_cast<uint64_t>(flag));
  CHECK(device.mailbox.last_value == 2);
  CHECK(device.mailbox.expected == 3);
}

TEST_CASE("threads that return before a barrier do not hold up the others, as on GPUs", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(R"(
    __global__ void early_exit(int* out, int n) {
      __shared__ int tile[64];
      if (static_cast<int>(threadIdx.x) >= n) return;
      tile[threadIdx.x] = static_cast<int>(threadIdx.x);
      __syncthreads();
      out[threadIdx.x] = tile[n - 1 - static_cast<int>(threadIdx.x)];
    }
  )").kernel("early_exit");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 40);
  for (int t = 0; t < 40; ++t) REQUIRE(out[t] == 39 - t);
}

TEST_CASE("a device thread overflowing its stack is a fault that says so", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile(R"(
    __device__ int deep(volatile char* p, int n) { volatile char frame[4096]; frame[0] = p[0]; return n == 0 ? frame[0] : deep(frame, n - 1) + 1; }
    __global__ void overflow(int* out) { char c = 1; out[0] = deep(&c, 1 << 20); }
  )").kernel("overflow");
  CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, device.at<int>(0)); }),
             Catch::Contains("stack overflow of a device thread"));
}

TEST_CASE("warp operations the cpu backend lacks are compile errors naming the operation", "[unit][cpu]") {
  CpuDevice device;
  Errc code{};
  const std::string message = error_of(
      [&] {
        device.compile(R"(
      __global__ void match(int* p) {
        p[threadIdx.x] = __match_any_sync(0xffffffffu, p[threadIdx.x]);
      }
    )");
      },
      &code);
  CHECK(code == Errc::compile);
  CHECK_THAT(message, Catch::Contains("__match_any_sync (warp match) cannot run on the cpu backend"));
  CHECK_THAT(message, Catch::Contains("snippet:3"));
}

TEST_CASE("launch configurations no GPU accepts are errors", "[unit][cpu]") {
  CpuDevice device;
  auto& k = device.compile("__global__ void nothing() {}").kernel("nothing");
  Errc code{};
  CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1025, 1, 1}, 0); }, &code),
             Catch::Contains("a block of 1025 threads: at most 1024"));
  CHECK(code == Errc::launch);
  CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, size_t(2) << 20); }),
             Catch::Contains("dynamic shared memory"));
}

TEST_CASE("block copies move every element between ranks at any alignment and length", "[unit][cpu]") {
  CpuDevice device(2, 0);
  auto& program = device.compile(R"(
    __global__ void push(const int16_t* src, int16_t* dst, size_t n, iris::Context ctx) { ctx.put_block(src, dst, n, 1); }
    __global__ void pull(const int16_t* src, int16_t* dst, size_t n, iris::Context ctx) { ctx.get_block(src, dst, n, 1); }
  )");
  iris::abi::ContextData context{device.heap_bases, 0, 2};
  for (size_t offset : {0, 1, 7}) {
    for (size_t n : {1, 15, 1000, 4099}) {
      int16_t* src0 = device.at<int16_t>(0) + offset;
      int16_t* src1 = device.at<int16_t>(1) + offset;
      int16_t* dst = device.at<int16_t>(0, 256 * 1024) + offset;
      for (size_t i = 0; i < n; ++i) {
        src0[i] = static_cast<int16_t>(i * 3 + 1);
        src1[i] = static_cast<int16_t>(i * 5 + 2);
        dst[i] = 0;
      }
      // push: rank 0's src lands at dst's offset in rank 1's heap; pull: rank 1's src into rank 0's dst.
      device.launch(program.kernel("push"), {1, 1, 1}, {96, 1, 1}, 0, static_cast<const int16_t*>(src0), dst, n, context);
      int16_t* remote_dst = reinterpret_cast<int16_t*>(device.heaps[1] + (reinterpret_cast<char*>(dst) - device.heaps[0]));
      for (size_t i = 0; i < n; ++i) REQUIRE(remote_dst[i] == static_cast<int16_t>(i * 3 + 1));
      device.launch(program.kernel("pull"), {1, 1, 1}, {96, 1, 1}, 0, static_cast<const int16_t*>(src0), dst, n, context);
      for (size_t i = 0; i < n; ++i) REQUIRE(dst[i] == static_cast<int16_t>(i * 5 + 2));
    }
  }
}
