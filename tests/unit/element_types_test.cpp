// 16-bit float conversions (round to nearest even from double) and random fills.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "heap/element_types.hpp"
#include "heap/random_fill.hpp"

using namespace iris::heap;

namespace {

// bfloat16 of a float by the usual bit trick (exact for inputs that are floats).
uint16_t bfloat16_of_float_reference(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

}  // namespace

TEST_CASE("float16 encodes known values, rounding ties to even and overflowing to infinity", "[unit][dtype]") {
  CHECK(float16_from_double(1.0) == 0x3c00);
  CHECK(float16_from_double(-2.0) == 0xc000);
  CHECK(float16_from_double(0.1) == 0x2e66);
  CHECK(float16_from_double(65504.0) == 0x7bff);
  CHECK(float16_from_double(65519.99) == 0x7bff);
  CHECK(float16_from_double(65520.0) == 0x7c00);
  CHECK(float16_from_double(1e300) == 0x7c00);
  CHECK(float16_from_double(-INFINITY) == 0xfc00);
  CHECK(float16_from_double(std::ldexp(1.0, -24)) == 0x0001);     // smallest subnormal
  CHECK(float16_from_double(std::ldexp(1.0, -25)) == 0x0000);     // tie: to even (zero)
  CHECK(float16_from_double(std::ldexp(1.5, -25)) == 0x0001);
  CHECK(float16_from_double(std::ldexp(1.0, -14)) == 0x0400);     // smallest normal
  CHECK(float16_from_double(1.0 + std::ldexp(1.0, -11)) == 0x3c00);  // tie between 1 and next: even
  CHECK(float16_from_double(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3c02);
  CHECK(float16_from_double(-0.0) == 0x8000);
  uint16_t nan = float16_from_double(NAN);
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
}

TEST_CASE("every float16 bit pattern decodes and encodes back to itself", "[unit][dtype]") {
  size_t mismatches = 0;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = float16_to_double(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    mismatches += float16_from_double(value) != bits;
  }
  CHECK(mismatches == 0);
  CHECK(float16_to_double(0x7bff) == 65504.0);
  CHECK(float16_to_double(0x0001) == std::ldexp(1.0, -24));
}

TEST_CASE("bfloat16 rounds like the float bit trick for floats, and round-trips every pattern", "[unit][dtype]") {
  CHECK(bfloat16_from_double(1.0) == 0x3f80);
  CHECK(bfloat16_from_double(3.14159265358979) == 0x4049);
  std::mt19937 random(3);
  size_t mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = random();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    mismatches += bfloat16_from_double(f) != bfloat16_of_float_reference(f);
  }
  CHECK(mismatches == 0);
  size_t round_trip = 0;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = bfloat16_to_double(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) round_trip += bfloat16_from_double(value) != bits;
  }
  CHECK(round_trip == 0);
}

TEST_CASE("bfloat16 from a double rounds once (not through float first)", "[unit][dtype]") {
  // Just above the tie between 1 and 1 + 2^-7: rounding to float first would land on the tie (then
  // even: 1.0); rounding once goes up.
  double value = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  CHECK(bfloat16_from_double(value) == 0x3f81);
}

TEST_CASE("random fills are reproducible per (seed, stream, counter) and differ between streams", "[unit][random]") {
  auto fill = [](ElementType type, Distribution d, double a, double b, RandomStream s) {
    std::vector<uint8_t> out(1000 * element_size(type));
    random_fill(out.data(), type, 1000, d, a, b, s);
    return out;
  };
  auto first = fill(ElementType::float32, Distribution::uniform, 0, 1, {7, 1, 0});
  CHECK(first == fill(ElementType::float32, Distribution::uniform, 0, 1, {7, 1, 0}));
  CHECK(first != fill(ElementType::float32, Distribution::uniform, 0, 1, {7, 2, 0}));
  CHECK(first != fill(ElementType::float32, Distribution::uniform, 0, 1, {8, 1, 0}));
  CHECK(first != fill(ElementType::float32, Distribution::uniform, 0, 1, {7, 1, 1}));
}

TEST_CASE("uniform values stay in [0, 1) in every float dtype, even float16", "[unit][random]") {
  for (ElementType type : {ElementType::float16, ElementType::bfloat16, ElementType::float32, ElementType::float64}) {
    std::vector<uint8_t> out(50000 * element_size(type));
    random_fill(out.data(), type, 50000, Distribution::uniform, 0, 1, {1, 0, 0});
    double lo = 1, hi = 0;
    for (size_t i = 0; i < 50000; ++i) {
      double v;
      const uint8_t* p = out.data() + i * element_size(type);
      uint16_t bits;
      float f;
      switch (type) {
        case ElementType::float16: std::memcpy(&bits, p, 2); v = float16_to_double(bits); break;
        case ElementType::bfloat16: std::memcpy(&bits, p, 2); v = bfloat16_to_double(bits); break;
        case ElementType::float32: std::memcpy(&f, p, 4); v = f; break;
        default: std::memcpy(&v, p, 8); break;
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    CHECK(lo >= 0);
    CHECK(hi < 1);
    CHECK(hi > 0.9);
  }
}

TEST_CASE("random integers cover [low, high) without bias and refuse empty ranges", "[unit][random]") {
  std::vector<int64_t> out(60000);
  random_fill(out.data(), ElementType::int64, out.size(), Distribution::integer, -3, 3, {5, 0, 0});
  std::vector<int> counts(6, 0);
  for (int64_t v : out) {
    REQUIRE(v >= -3);
    REQUIRE(v < 3);
    counts[v + 3]++;
  }
  for (int c : counts) CHECK(std::abs(c - 10000) < 500);
  CHECK_THROWS_AS(random_fill(out.data(), ElementType::int64, 1, Distribution::integer, 3, 3, {}), iris::Error);
  // the whole uint64 range
  std::vector<uint64_t> wide(100);
  random_fill(wide.data(), ElementType::uint64, wide.size(), Distribution::integer, 0, 18446744073709551616.0, {1, 0, 0});
  size_t above_half = 0;
  for (uint64_t v : wide) above_half += v >> 63;
  CHECK(above_half > 20);
}

TEST_CASE("normal values have mean 0 and standard deviation 1", "[unit][random]") {
  std::vector<double> out(100001);
  random_fill(out.data(), ElementType::float64, out.size(), Distribution::normal, 0, 1, {9, 0, 0});
  double sum = 0, squares = 0;
  for (double v : out) {
    sum += v;
    squares += v * v;
  }
  double mean = sum / out.size();
  CHECK(std::fabs(mean) < 0.02);
  CHECK(std::fabs(std::sqrt(squares / out.size() - mean * mean) - 1) < 0.02);
}

TEST_CASE("dtype names map to element types and sizes; unknown names list the dtypes", "[unit][dtype]") {
  CHECK(element_size(element_type_named("bfloat16")) == 2);
  CHECK(element_size(element_type_named("uint64")) == 8);
  CHECK(element_size(element_type_named("bool")) == 1);
  CHECK_THROWS_WITH(element_type_named("float"), Catch::Contains("unknown dtype 'float'"));
}
