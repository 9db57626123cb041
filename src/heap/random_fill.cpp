#include "heap/random_fill.hpp"

#include <cmath>
#include <random>

#include "core/error.hpp"

namespace iris::heap {
namespace {

// Significand bits of each floating dtype: uniform values are multiples of 2^-bits, all exact.
int precision_bits(ElementType type) {
  switch (type) {
    case ElementType::float16: return 11;
    case ElementType::bfloat16: return 8;
    case ElementType::float32: return 24;
    default: return 53;
  }
}

std::mt19937_64 make_engine(const RandomStream& s) {
  auto lo = [](uint64_t v) { return static_cast<uint32_t>(v); };
  auto hi = [](uint64_t v) { return static_cast<uint32_t>(v >> 32); };
  std::seed_seq seq{lo(s.seed), hi(s.seed), lo(s.stream), hi(s.stream), lo(s.counter), hi(s.counter)};
  return std::mt19937_64(seq);
}

double unit_interval(std::mt19937_64& engine, int bits) {
  return std::ldexp(static_cast<double>(engine() >> (64 - bits)), -bits);
}

}  // namespace

void random_fill(void* out, ElementType type, size_t count, Distribution distribution, double a, double b,
                 const RandomStream& stream) {
  std::mt19937_64 engine = make_engine(stream);
  auto* bytes = static_cast<uint8_t*>(out);
  const size_t size = element_size(type);
  switch (distribution) {
    case Distribution::uniform: {
      if (!is_floating(type)) throw Error(Errc::invalid_argument, "uniform random numbers need a floating-point dtype");
      int bits = precision_bits(type);
      for (size_t i = 0; i < count; ++i) store_element(type, a + (b - a) * unit_interval(engine, bits), bytes + i * size);
      break;
    }
    case Distribution::normal: {
      if (!is_floating(type)) throw Error(Errc::invalid_argument, "normal random numbers need a floating-point dtype");
      const double two_pi = 6.283185307179586476925286766559;
      for (size_t i = 0; i < count; i += 2) {
        double u1 = std::ldexp(static_cast<double>((engine() >> 11) + 1), -53);  // (0, 1]: log is finite
        double u2 = unit_interval(engine, 53);
        double radius = std::sqrt(-2.0 * std::log(u1));
        store_element(type, a + b * radius * std::cos(two_pi * u2), bytes + i * size);
        if (i + 1 < count) store_element(type, a + b * radius * std::sin(two_pi * u2), bytes + (i + 1) * size);
      }
      break;
    }
    case Distribution::integer: {
      if (!(a < b) || a != std::floor(a) || b != std::floor(b) || a < -9223372036854775808.0 ||
          b > 18446744073709551616.0) {
        throw Error(Errc::invalid_argument, format("randint needs whole numbers low < high, got %.17g and %.17g", a, b));
      }
      // Two's complement bits of the bounds; differences modulo 2^64 are then exact.
      auto to_bits = [](double v) -> uint64_t {
        if (v < 0) return static_cast<uint64_t>(static_cast<int64_t>(v));
        if (v >= 18446744073709551616.0) return 0;  // 2^64 wraps to 0
        return static_cast<uint64_t>(v);
      };
      uint64_t low = to_bits(a);
      uint64_t range = to_bits(b) - low;  // 0 stands for all 2^64 values
      // Unbiased: reject the few draws below 2^64 mod range.
      uint64_t threshold = range == 0 ? 0 : (0 - range) % range;
      for (size_t i = 0; i < count; ++i) {
        uint64_t draw;
        do draw = engine();
        while (draw < threshold);
        uint64_t value = low + (range == 0 ? draw : draw % range);
        store_element_int64(type, static_cast<int64_t>(value), bytes + i * size);
      }
      break;
    }
  }
}

}  // namespace iris::heap
