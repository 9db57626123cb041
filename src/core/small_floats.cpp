#include "core/small_floats.hpp"

#include <cmath>
#include <cstring>

namespace iris {
namespace {

// An IEEE-style binary format with `exponent_bits` and `mantissa_bits` (stored, without the implicit
// one), encoded from a double's bits: element access calls this per element, so no libm calls.
uint16_t encode_small_float(double value, int exponent_bits, int mantissa_bits) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = static_cast<uint32_t>(bits >> 63) << (exponent_bits + mantissa_bits);
  const int double_exponent = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t double_mantissa = bits & ((uint64_t(1) << 52) - 1);
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t infinity = ((1u << exponent_bits) - 1) << mantissa_bits;
  if (double_exponent == 0x7ff) {
    return static_cast<uint16_t>(sign | infinity | (double_mantissa != 0 ? 1u << (mantissa_bits - 1) : 0u));
  }
  if (double_exponent == 0) return static_cast<uint16_t>(sign);  // zero, or far below the smallest subnormal
  const int exponent = double_exponent - 1023;
  if (exponent > bias) return static_cast<uint16_t>(sign | infinity);
  // Keep the top bits of the significand; round to nearest, ties to even. A carry out of the
  // mantissa moves into the exponent field, which is exactly the next binade (or infinity).
  uint64_t significand;
  int shift;
  uint64_t base;
  if (exponent >= 1 - bias) {
    significand = double_mantissa;
    shift = 52 - mantissa_bits;
    base = static_cast<uint64_t>(exponent + bias) << mantissa_bits;
  } else {
    significand = double_mantissa | uint64_t(1) << 52;  // subnormal in the target: implicit one made explicit
    shift = 52 - mantissa_bits + (1 - bias - exponent);
    base = 0;
    if (shift > 63) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  }
  uint64_t kept = significand >> shift;
  uint64_t rest = significand & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return static_cast<uint16_t>(sign | (base + kept));
}

double decode_small_float(uint16_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t exponent_all_ones = (1u << exponent_bits) - 1;
  const uint64_t sign = static_cast<uint64_t>((bits >> (exponent_bits + mantissa_bits)) & 1) << 63;
  const uint32_t exponent_field = (bits >> mantissa_bits) & exponent_all_ones;
  const uint64_t mantissa = bits & ((1u << mantissa_bits) - 1);
  uint64_t out;
  if (exponent_field == 0) {
    // subnormal (or zero): mantissa * 2^(1 - bias - mantissa_bits), exact in a double
    double magnitude = static_cast<double>(mantissa) * std::ldexp(1.0, 1 - bias - mantissa_bits);
    std::memcpy(&out, &magnitude, sizeof out);
    out |= sign;
  } else if (exponent_field == exponent_all_ones) {
    out = sign | uint64_t(0x7ff) << 52 | (mantissa != 0 ? uint64_t(1) << 51 : 0);
  } else {
    out = sign | static_cast<uint64_t>(static_cast<int>(exponent_field) - bias + 1023) << 52 |
          mantissa << (52 - mantissa_bits);
  }
  double result;
  std::memcpy(&result, &out, sizeof result);
  return result;
}

}  // namespace

uint16_t float16_from_double(double value) { return encode_small_float(value, 5, 10); }
double float16_to_double(uint16_t bits) { return decode_small_float(bits, 5, 10); }
uint16_t bfloat16_from_double(double value) { return encode_small_float(value, 8, 7); }
double bfloat16_to_double(uint16_t bits) { return decode_small_float(bits, 8, 7); }

}  // namespace iris
