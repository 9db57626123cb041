// Warp-level operations on the cpu backend: shuffles, votes and __syncwarp give what an NVIDIA GPU
// gives (32-lane warps, PTX's shuffle rules), with partial warps, exited lanes and every value size.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_test_support.hpp"

using iris::runtime::Dim3;
using iris::test::CpuDevice;
using iris::test::error_of;

namespace {

const char* kWarps = R"(
template <class T>
__device__ T warp_sum_xor(T v) {
  for (int m = 16; m > 0; m /= 2) v = v + __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}
template <class T>
__device__ T warp_sum_down(T v) {
  for (int d = 16; d > 0; d /= 2) v = v + __shfl_down_sync(0xffffffffu, v, d);
  return v;
}
__device__ unsigned int linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// out[2 * warp] = butterfly sum seen by lane 5, out[2 * warp + 1] = down-shift sum seen by lane 0.
template <class T>
__global__ void sums(const T* in, T* out) {
  const unsigned int t = linear_thread();
  const unsigned int g = blockIdx.x * blockDim.x * blockDim.y + t;
  const T x = warp_sum_xor(in[g]);
  const T y = warp_sum_down(in[g]);
  if (t % 32 == 5) out[2 * (g / 32)] = x;
  if (t % 32 == 0) out[2 * (g / 32) + 1] = y;
}
__global__ void sums_int(const int* in, int* out) { sums(in, out); }
__global__ void sums_float(const float* in, float* out) { sums(in, out); }
__global__ void sums_double(const double* in, double* out) { sums(in, out); }
__global__ void sums_int64(const long long* in, long long* out) { sums(in, out); }
__global__ void sums_half(const iris::half* in, float* out) {
  const unsigned int t = linear_thread();
  iris::half v = in[t];
  for (int m = 16; m > 0; m /= 2) v = iris::half(float(v) + float(__shfl_xor_sync(0xffffffffu, v, m)));
  if (t % 32 == 0) out[t / 32] = float(v);
}
__global__ void sums_bfloat16(const iris::bfloat16* in, float* out) {
  const unsigned int t = linear_thread();
  iris::bfloat16 v = in[t];
  for (int m = 16; m > 0; m /= 2) v = iris::bfloat16(float(v) + float(__shfl_xor_sync(0xffffffffu, v, m)));
  if (t % 32 == 0) out[t / 32] = float(v);
}
__global__ void bytes(int8_t* out) {
  const unsigned int t = linear_thread();
  out[t] = __shfl_sync(0xffffffffu, static_cast<int8_t>(-static_cast<int>(t)), 31 - static_cast<int>(t % 32));
}

// Each lane's result of every shuffle kind, for a given delta/lane argument and width.
__global__ void shuffles(int* out, int arg, int width) {
  const unsigned int t = linear_thread();
  const int v = 1000 + static_cast<int>(t);
  const unsigned int n = blockDim.x * blockDim.y * blockDim.z;
  out[t] = __shfl_sync(0xffffffffu, v, arg, width);
  out[n + t] = __shfl_up_sync(0xffffffffu, v, arg, width);
  out[2 * n + t] = __shfl_down_sync(0xffffffffu, v, arg, width);
  out[3 * n + t] = __shfl_xor_sync(0xffffffffu, v, arg, width);
}

// Votes over a block whose last warp is partial; activemask and lane ids.
__global__ void votes(unsigned int* out) {
  const unsigned int t = linear_thread();
  const int even = (t % 2) == 0, low = (t % 32) < 3;
  out[6 * t] = __ballot_sync(0xffffffffu, even);
  out[6 * t + 1] = __any_sync(0xffffffffu, low);
  out[6 * t + 2] = __all_sync(0xffffffffu, low);
  out[6 * t + 3] = __all_sync(0xffffffffu, t < 1000);
  out[6 * t + 4] = __activemask();
  out[6 * t + 5] = __any_sync(0xffffffffu, 0);
}

// __activemask in a branch: the lanes that took it, as on a GPU.
__global__ void branch_mask(unsigned int* out) {
  unsigned int m = 0;
  if (threadIdx.x % 32 < 5) m = __activemask();
  __syncthreads();
  out[threadIdx.x] = m;
}

// Lanes past n return first; the rest reduce with a full mask (exited lanes do not take part).
__global__ void after_exit(int* out, unsigned int n) {
  const unsigned int t = linear_thread();
  if (t >= n) return;
  int v = static_cast<int>(t) + 1;
  for (int d = 16; d > 0; d /= 2) {
    const int other = __shfl_down_sync(0xffffffffu, v, d);
    if ((t % 32) + d < 32 && t + d < n) v += other;
  }
  out[t] = v;
  out[64 + t] = static_cast<int>(__activemask());
}

// Two half-warps, each its own group; lanes reach the shuffle after different amounts of waiting.
__global__ void halves(int* out, int* flag) {
  const unsigned int t = threadIdx.x;
  if (t % 3 == 0) { for (int i = 0; i < static_cast<int>(t); ++i) iris::detail::pause(); }
  const unsigned int mask = t < 16 ? 0x0000ffffu : 0xffff0000u;
  out[t] = __shfl_sync(mask, static_cast<int>(t) * 10, 3, 16);
}

// __syncwarp orders the warp's shared-memory writes before its reads.
__global__ void exchange(int* out) {
  __shared__ int tile[64];
  const unsigned int t = threadIdx.x;
  tile[t] = static_cast<int>(t) * 7;
  __syncwarp();
  out[t] = tile[(t / 32) * 32 + 31 - t % 32];
}

// HIP's spellings: mask-less shuffles and votes, __ballot 64 bits wide, __lane_id.
__global__ void hip_style(long long* out) {
  const unsigned int t = threadIdx.x;
  long long v = static_cast<long long>(t) << 33;
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor(v, m);
  out[4 * t] = v;
  out[4 * t + 1] = static_cast<long long>(__ballot(t % 4 == 1));
  out[4 * t + 2] = __any(t == 7) + 2 * __all(t < 64);
  out[4 * t + 3] = __lane_id();
}

// A HIP shuffle in a branch only some lanes take: the others go on to the barrier.
__global__ void hip_divergent(int* out) {
  int v = static_cast<int>(threadIdx.x);
  if (threadIdx.x % 32 < 8) v = __shfl_xor(v, 1);
  __syncthreads();
  out[threadIdx.x] = v;
}

__global__ void not_in_mask(int* out) { out[threadIdx.x] = __shfl_sync(0x1u, 1, 0); }
__global__ void disagree(int* out) {
  out[threadIdx.x] = threadIdx.x == 4 ? __ballot_sync(0xffffffffu, 1) : __shfl_sync(0xffffffffu, 1, 0);
}
__global__ void deadlock(int* out) {
  if (threadIdx.x == 0) __syncthreads(); else out[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0);
}
)";

// What PTX's shfl.sync reads for `lane` (as CUDA calls it): the expected source lane.
int expected_source(int kind, int lane, int arg, int width) {
  const int base = lane / width * width;
  switch (kind) {
    case 0: return base + arg % width;
    case 1: return lane - arg >= base ? lane - arg : lane;
    case 2: return lane + arg < base + width ? lane + arg : lane;
    default: return (lane ^ arg) < base + width ? lane ^ arg : lane;
  }
}

}  // namespace

TEST_CASE("warp shuffle reductions sum a warp as a GPU does, for 1- to 8-byte types", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& program = device.compile(kWarps);
  // Blocks of 8 x 8 threads: lanes follow the linear thread index, two warps per block.
  SECTION("int, float, double and int64") {
    int* in_i = device.at<int>(0);
    float* in_f = device.at<float>(0, 80 * 1024);
    double* in_d = device.at<double>(0, 96 * 1024);
    long long* in_l = device.at<long long>(0, 128 * 1024);
    for (int i = 0; i < 256; ++i) {
      in_i[i] = i * 3 - 100;
      in_f[i] = static_cast<float>(i % 9) * 0.5f;
      in_d[i] = i * 0.25;
      in_l[i] = (static_cast<long long>(i) << 36) + i;
    }
    int* out_i = device.at<int>(0, 160 * 1024);
    float* out_f = device.at<float>(0, 164 * 1024);
    double* out_d = device.at<double>(0, 168 * 1024);
    long long* out_l = device.at<long long>(0, 176 * 1024);
    device.launch(program.kernel("sums_int"), Dim3{4, 1, 1}, Dim3{8, 8, 1}, 0, static_cast<const int*>(in_i), out_i);
    device.launch(program.kernel("sums_float"), Dim3{4, 1, 1}, Dim3{8, 8, 1}, 0, static_cast<const float*>(in_f), out_f);
    device.launch(program.kernel("sums_double"), Dim3{4, 1, 1}, Dim3{8, 8, 1}, 0, static_cast<const double*>(in_d), out_d);
    device.launch(program.kernel("sums_int64"), Dim3{4, 1, 1}, Dim3{8, 8, 1}, 0, static_cast<const long long*>(in_l), out_l);
    for (int w = 0; w < 8; ++w) {
      long long si = 0, sl = 0;
      double sf = 0, sd = 0;
      for (int l = 0; l < 32; ++l) {
        si += in_i[w * 32 + l];
        sf += in_f[w * 32 + l];
        sd += in_d[w * 32 + l];
        sl += in_l[w * 32 + l];
      }
      for (int which = 0; which < 2; ++which) {
        REQUIRE(out_i[2 * w + which] == si);
        REQUIRE(out_f[2 * w + which] == static_cast<float>(sf));
        REQUIRE(out_d[2 * w + which] == sd);
        REQUIRE(out_l[2 * w + which] == sl);
      }
    }
  }
  SECTION("iris::half and iris::bfloat16 move as their 16 bits") {
    // 0, 1, 2, 3 over and over: every partial sum is exact in both formats.
    const uint16_t half_bits[] = {0x0000, 0x3c00, 0x4000, 0x4200};
    const uint16_t bfloat16_bits[] = {0x0000, 0x3f80, 0x4000, 0x4040};
    auto* half_in = device.at<uint16_t>(0);
    auto* bf16_in = device.at<uint16_t>(0, 80 * 1024);
    for (int i = 0; i < 64; ++i) {
      half_in[i] = half_bits[i % 4];
      bf16_in[i] = bfloat16_bits[i % 4];
    }
    float* out = device.at<float>(0, 160 * 1024);
    device.launch(program.kernel("sums_half"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, static_cast<const uint16_t*>(half_in), out);
    CHECK(out[0] == 48.0f);
    CHECK(out[1] == 48.0f);
    device.launch(program.kernel("sums_bfloat16"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, static_cast<const uint16_t*>(bf16_in), out);
    CHECK(out[0] == 48.0f);
    CHECK(out[1] == 48.0f);
  }
  SECTION("1-byte values") {
    auto* out = device.at<int8_t>(0);
    device.launch(program.kernel("bytes"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out);
    for (int t = 0; t < 64; ++t) REQUIRE(out[t] == static_cast<int8_t>(-((t / 32) * 32 + 31 - t % 32)));
  }
}

TEST_CASE("shuffles follow PTX's rules for every kind, lane argument and width", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("shuffles");
  int* out = device.at<int>(0);
  const int n = 64;
  for (int width : {32, 16, 8, 4, 2, 1}) {
    for (int arg : {0, 1, 3, 5, 16, 31}) {
      device.launch(k, Dim3{1, 1, 1}, Dim3{n, 1, 1}, 0, out, arg, width);
      for (int kind = 0; kind < 4; ++kind) {
        for (int t = 0; t < n; ++t) {
          // xor may reach an earlier segment, never a later one.
          const int lane = t % 32;
          const int source = expected_source(kind, lane, arg, width);
          INFO("kind " << kind << " width " << width << " arg " << arg << " thread " << t);
          REQUIRE(out[kind * n + t] == 1000 + (t / 32) * 32 + source);
        }
      }
    }
  }
}

TEST_CASE("votes see the lanes that take part, in partial warps too", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("votes");
  auto* out = device.at<unsigned int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{48, 1, 1}, 0, out);  // warp 1 has lanes 0-15 only
  for (unsigned t = 0; t < 48; ++t) {
    const unsigned present = t < 32 ? 0xffffffffu : 0x0000ffffu;
    INFO("thread " << t);
    CHECK(out[6 * t] == (0x55555555u & present));
    CHECK(out[6 * t + 1] == 1u);
    CHECK(out[6 * t + 2] == 0u);
    CHECK(out[6 * t + 3] == 1u);
    CHECK(out[6 * t + 4] == present);
    CHECK(out[6 * t + 5] == 0u);
  }
}

TEST_CASE("__activemask names the lanes that reach it together", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("branch_mask");
  auto* out = device.at<unsigned int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out);
  for (unsigned t = 0; t < 64; ++t) REQUIRE(out[t] == (t % 32 < 5 ? 0x1fu : 0u));
}

TEST_CASE("lanes that exited do not hold up a full-mask collective", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("after_exit");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 40u);
  // Warp 0 sums 1..32 in lane 0; warp 1's lanes 0-7 (threads 32-39) sum 33..40.
  CHECK(out[0] == 32 * 33 / 2);
  CHECK(out[32] == (33 + 40) * 8 / 2);
  // __activemask after the loop: lanes that returned are gone.
  CHECK(static_cast<unsigned>(out[64 + 0]) == 0xffffffffu);
  CHECK(static_cast<unsigned>(out[64 + 32]) == 0x000000ffu);
}

TEST_CASE("disjoint masks form separate groups, whatever order the lanes arrive in", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("halves");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, device.at<int>(0, 128 * 1024));
  for (int t = 0; t < 32; ++t) REQUIRE(out[t] == ((t / 16) * 16 + 3) * 10);
}

TEST_CASE("__syncwarp orders a warp's shared-memory writes before its reads", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& k = device.compile(kWarps).kernel("exchange");
  int* out = device.at<int>(0);
  device.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out);
  for (int t = 0; t < 64; ++t) REQUIRE(out[t] == ((t / 32) * 32 + 31 - t % 32) * 7);
}

TEST_CASE("HIP's mask-less spellings run as 32-lane warps; __ballot is 64 bits wide", "[unit][cpu][warp]") {
  CpuDevice device;
  auto& program = device.compile(kWarps);
  auto* out = device.at<long long>(0);
  device.launch(program.kernel("hip_style"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out);
  for (long long t = 0; t < 64; ++t) {
    const long long base = (t / 32) * 32;
    REQUIRE(out[4 * t] == ((32 * base + 31 * 32 / 2) << 33));
    REQUIRE(out[4 * t + 1] == 0x22222222ll);
    REQUIRE(out[4 * t + 2] == (t < 32 ? 3 : 2));
    REQUIRE(out[4 * t + 3] == t % 32);
  }
  // Lanes 0-7 shuffle among themselves while the others already wait at the barrier.
  int* values = device.at<int>(0, 256 * 1024);
  device.launch(program.kernel("hip_divergent"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, values);
  for (int t = 0; t < 64; ++t) REQUIRE(values[t] == (t % 32 < 8 ? t ^ 1 : t));
}

TEST_CASE("misused warp collectives are device faults that say what is wrong, never a hang", "[unit][cpu][warp]") {
  const char* expected[][2] = {
      {"not_in_mask", "__shfl_sync called by lane 1 of warp 0 with mask 0x00000001, which does not name the lane itself"},
      {"disagree", "the lanes of warp 0 disagree: lane 0 calls __shfl_sync with mask 0xffffffff, lane 4 calls "
                   "__ballot_sync with mask 0xffffffff"},
      {"deadlock", "lanes 0xfffffffe of warp 0 wait in __shfl_sync with mask 0xffffffff for lanes 0x00000001, which "
                   "wait elsewhere"},
  };
  for (const auto& [kernel, message] : expected) {
    CpuDevice device;
    auto& k = device.compile(kWarps).kernel(kernel);
    INFO(kernel);
    CHECK_THAT(error_of([&] { device.launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, device.at<int>(0)); }),
               Catch::Contains(message) && Catch::Contains("device fault in kernel " + std::string(kernel)));
  }
}
