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

// line_fetch loads a line as it is, and line_holds compares its epochs apart: a batch of lines is fetched
// with no comparison in between, so that their loads are in flight together (impl/ccl_ll.hpp,
// OneWay::receive_batch).
#if defined(IRIS_PLATFORM_CUDA)
// One 16-byte access each way: a warp's lines to one peer leave as whole 512-byte runs.
IRIS_DEVICE void line_store(Line* p, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(static_cast<uint32_t>(data)),
               "r"(flag), "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}
IRIS_DEVICE void line_fetch(const Line* p, Line& v) {
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.lo), "=r"(v.flag_lo), "=r"(v.hi), "=r"(v.flag_hi)
               : "l"(p)
               : "memory");
}
#else
// Elsewhere each half is a relaxed 8-byte atomic at system scope: the same guarantee.
IRIS_DEVICE void line_store(Line* p, uint64_t data, uint32_t flag) {
  unsigned long long* half = reinterpret_cast<unsigned long long*>(p);
  ::iris::detail::atomic_store(half, static_cast<unsigned long long>(flag) << 32 | (data & 0xffffffffull), relaxed, sys);
  ::iris::detail::atomic_store(half + 1, static_cast<unsigned long long>(flag) << 32 | (data >> 32), relaxed, sys);
}
IRIS_DEVICE void line_fetch(const Line* p, Line& v) {
  const unsigned long long* half = reinterpret_cast<const unsigned long long*>(p);
  const unsigned long long a = ::iris::detail::atomic_load(half, relaxed, sys);
  const unsigned long long b = ::iris::detail::atomic_load(half + 1, relaxed, sys);
  v.lo = static_cast<uint32_t>(a);
  v.flag_lo = static_cast<uint32_t>(a >> 32);
  v.hi = static_cast<uint32_t>(b);
  v.flag_hi = static_cast<uint32_t>(b >> 32);
}
#endif

// Whether a fetched line carries `flag` in both halves (then `data` is its 8 bytes).
IRIS_DEVICE bool line_holds(const Line& v, uint32_t flag, uint64_t& data) {
  data = static_cast<uint64_t>(v.hi) << 32 | v.lo;
  return v.flag_lo == flag && v.flag_hi == flag;
}

IRIS_DEVICE bool line_load(const Line* p, uint32_t flag, uint64_t& data) {
  Line v;
  line_fetch(p, v);
  return line_holds(v, flag, data);
}

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
