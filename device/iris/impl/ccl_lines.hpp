// Lines of the one-way protocol (impl/ccl_ll.hpp has the protocol; docs/collectives.md, "One way"):
// the 16-byte unit every one-way store moves, and where the staging's slots are. Here, apart, because
// the call protocol reads a one-way call's header too (Call::one_way_descriptor, ccl_call.hpp).
#ifndef IRIS_IMPL_CCL_LINES_HPP
#define IRIS_IMPL_CCL_LINES_HPP

namespace iris {
namespace ccl {
namespace detail {

// 8 bytes of data and the call's 32-bit epoch twice: {data low, epoch, data high, epoch}. Each 8-byte
// half is written and read as one access, so a half whose epoch is the call's carries that call's data.
struct alignas(16) Line {
  uint32_t lo, flag_lo, hi, flag_hi;
};

#if defined(IRIS_PLATFORM_CUDA)
// One 16-byte access each way: a warp's lines to one peer leave as whole 512-byte runs.
IRIS_DEVICE void line_store(Line* p, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(static_cast<uint32_t>(data)),
               "r"(flag), "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}
IRIS_DEVICE bool line_load(const Line* p, uint32_t flag, uint64_t& data) {
  uint32_t lo, flag_lo, hi, flag_hi;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(lo), "=r"(flag_lo), "=r"(hi), "=r"(flag_hi)
               : "l"(p)
               : "memory");
  data = static_cast<uint64_t>(hi) << 32 | lo;
  return flag_lo == flag && flag_hi == flag;
}
#else
// Elsewhere each half is a relaxed 8-byte atomic at system scope: the same guarantee.
IRIS_DEVICE void line_store(Line* p, uint64_t data, uint32_t flag) {
  unsigned long long* half = reinterpret_cast<unsigned long long*>(p);
  ::iris::detail::atomic_store(half, static_cast<unsigned long long>(flag) << 32 | (data & 0xffffffffull), relaxed, sys);
  ::iris::detail::atomic_store(half + 1, static_cast<unsigned long long>(flag) << 32 | (data >> 32), relaxed, sys);
}
IRIS_DEVICE bool line_load(const Line* p, uint32_t flag, uint64_t& data) {
  const unsigned long long* half = reinterpret_cast<const unsigned long long*>(p);
  const unsigned long long a = ::iris::detail::atomic_load(half, relaxed, sys);
  const unsigned long long b = ::iris::detail::atomic_load(half + 1, relaxed, sys);
  data = (b & 0xffffffffull) << 32 | (a & 0xffffffffull);
  return static_cast<uint32_t>(a >> 32) == flag && static_cast<uint32_t>(b >> 32) == flag;
}
#endif

// A slot: kHeaderLines lines of header (line 0: a hash of the sender's call descriptor; lines 1 to
// kDescriptorLines: the descriptor itself, a word a line), then the data lines. The host sizes the
// staging (src/lua/iris/ccl.lua) and writes where it is into every rank's call state at iris.init.
constexpr int kHeaderLines = 16;
constexpr int kDescriptorLines = 9;

struct Staging {
  unsigned char* base;  // this rank's staging, in its own heap
  uint64_t slot_bytes;

  IRIS_DEVICE Line* slot(int source, uint64_t epoch, int phase) const {
    const uint64_t index = (static_cast<uint64_t>(source) * 2 + (epoch & 1)) * 2 + static_cast<uint64_t>(phase);
    return reinterpret_cast<Line*>(base + index * slot_bytes);
  }
  // One past the slots of `sources` source ranks: where point to point's region starts (ccl_p2p.hpp).
  IRIS_DEVICE unsigned char* end(int sources) const { return reinterpret_cast<unsigned char*>(slot(sources, 0, 0)); }
};

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_LINES_HPP
