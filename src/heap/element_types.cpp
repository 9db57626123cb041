#include "heap/element_types.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"

namespace iris::heap {
namespace {

struct TypeInfo {
  const char* name;
  ElementType type;
  size_t size;
};

constexpr TypeInfo kTypes[] = {
    {"bool", ElementType::boolean, 1},     {"int8", ElementType::int8, 1},       {"uint8", ElementType::uint8, 1},
    {"int16", ElementType::int16, 2},      {"int32", ElementType::int32, 4},     {"uint32", ElementType::uint32, 4},
    {"int64", ElementType::int64, 8},      {"uint64", ElementType::uint64, 8},   {"float16", ElementType::float16, 2},
    {"bfloat16", ElementType::bfloat16, 2}, {"float32", ElementType::float32, 4}, {"float64", ElementType::float64, 8},
};

// An IEEE-style binary format with `exponent_bits` and `mantissa_bits` (stored, without the implicit 1).
uint16_t encode_small_float(double value, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int min_exponent = 1 - bias;
  const uint32_t exponent_all_ones = (1u << exponent_bits) - 1;
  const uint32_t sign = std::signbit(value) ? 1u << (exponent_bits + mantissa_bits) : 0u;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | exponent_all_ones << mantissa_bits | 1u << (mantissa_bits - 1));
  double magnitude = std::fabs(value);
  if (magnitude == 0) return static_cast<uint16_t>(sign);
  if (std::isinf(magnitude)) return static_cast<uint16_t>(sign | exponent_all_ones << mantissa_bits);
  int exponent = std::ilogb(magnitude);
  const double implicit_one = std::ldexp(1.0, mantissa_bits);
  if (exponent < min_exponent) {
    // Subnormal: units of 2^(min_exponent - mantissa_bits). A result of exactly 2^mantissa_bits is the
    // smallest normal number, whose encoding is that same bit pattern.
    double units = std::nearbyint(std::ldexp(magnitude, mantissa_bits - min_exponent));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(units));
  }
  // Scaling by a power of two is exact, so nearbyint (ties to even) rounds exactly once.
  double significand = std::nearbyint(std::ldexp(magnitude, mantissa_bits - exponent));
  if (significand == 2 * implicit_one) {
    significand = implicit_one;
    ++exponent;
  }
  if (exponent > bias) return static_cast<uint16_t>(sign | exponent_all_ones << mantissa_bits);
  uint32_t exponent_field = static_cast<uint32_t>(exponent + bias);
  uint32_t mantissa = static_cast<uint32_t>(significand - implicit_one);
  return static_cast<uint16_t>(sign | exponent_field << mantissa_bits | mantissa);
}

double decode_small_float(uint16_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t exponent_all_ones = (1u << exponent_bits) - 1;
  bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1;
  uint32_t exponent_field = (bits >> mantissa_bits) & exponent_all_ones;
  uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  double magnitude;
  if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  } else if (exponent_field == exponent_all_ones) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | 1u << mantissa_bits),
                           static_cast<int>(exponent_field) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

template <class T>
void store_as(double value, void* out) {
  T v = static_cast<T>(value);
  std::memcpy(out, &v, sizeof v);
}

template <class T>
void store_int_as(int64_t value, void* out) {
  T v = static_cast<T>(value);
  std::memcpy(out, &v, sizeof v);
}

}  // namespace

ElementType element_type_named(const std::string& name) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name) return t.type;
  }
  throw Error(Errc::invalid_argument,
              format("unknown dtype '%s' (dtypes: bool, int8, uint8, int16, int32, uint32, int64, uint64, float16, "
                     "bfloat16, float32, float64)",
                     name.c_str()));
}

size_t element_size(ElementType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t.size;
  }
  return 0;
}

bool is_floating(ElementType type) {
  return type == ElementType::float16 || type == ElementType::bfloat16 || type == ElementType::float32 ||
         type == ElementType::float64;
}

uint16_t float16_from_double(double value) { return encode_small_float(value, 5, 10); }
double float16_to_double(uint16_t bits) { return decode_small_float(bits, 5, 10); }
uint16_t bfloat16_from_double(double value) { return encode_small_float(value, 8, 7); }
double bfloat16_to_double(uint16_t bits) { return decode_small_float(bits, 8, 7); }

void store_element(ElementType type, double value, void* out) {
  switch (type) {
    case ElementType::boolean: store_as<uint8_t>(value != 0 ? 1 : 0, out); break;
    case ElementType::int8: store_as<int8_t>(value, out); break;
    case ElementType::uint8: store_as<uint8_t>(value, out); break;
    case ElementType::int16: store_as<int16_t>(value, out); break;
    case ElementType::int32: store_as<int32_t>(value, out); break;
    case ElementType::uint32: store_as<uint32_t>(value, out); break;
    case ElementType::int64: store_as<int64_t>(value, out); break;
    case ElementType::uint64: store_as<uint64_t>(value, out); break;
    case ElementType::float16: store_as<uint16_t>(float16_from_double(value), out); break;
    case ElementType::bfloat16: store_as<uint16_t>(bfloat16_from_double(value), out); break;
    case ElementType::float32: store_as<float>(value, out); break;
    case ElementType::float64: store_as<double>(value, out); break;
  }
}

void store_element_int64(ElementType type, int64_t value, void* out) {
  switch (type) {
    case ElementType::boolean: store_int_as<uint8_t>(value != 0 ? 1 : 0, out); break;
    case ElementType::int8: store_int_as<int8_t>(value, out); break;
    case ElementType::uint8: store_int_as<uint8_t>(value, out); break;
    case ElementType::int16: store_int_as<int16_t>(value, out); break;
    case ElementType::int32: store_int_as<int32_t>(value, out); break;
    case ElementType::uint32: store_int_as<uint32_t>(value, out); break;
    case ElementType::int64: store_int_as<int64_t>(value, out); break;
    case ElementType::uint64: store_int_as<uint64_t>(value, out); break;
    default: store_element(type, static_cast<double>(value), out); break;
  }
}

}  // namespace iris::heap
