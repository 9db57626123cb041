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
  bool floating;
};

#define IRIS_HEAP_TYPE_INFO(name, code, bytes, kind) \
  {#name, static_cast<ElementType>(code), bytes, IRIS_HEAP_KIND_##kind},
#define IRIS_HEAP_KIND_bool false
#define IRIS_HEAP_KIND_int false
#define IRIS_HEAP_KIND_float true
constexpr TypeInfo kTypes[] = {IRIS_DTYPE_CODES(IRIS_HEAP_TYPE_INFO)};
#undef IRIS_HEAP_TYPE_INFO

// "bool, int8, ..., float64": what element_type_named's error lists.
#define IRIS_HEAP_TYPE_NAME(name, code, bytes, kind) ", " #name
constexpr const char* kTypeNames = IRIS_DTYPE_CODES(IRIS_HEAP_TYPE_NAME) + 2;
#undef IRIS_HEAP_TYPE_NAME

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

// Converts `value` (a double or an int64) to the element type, as a C cast would.
template <class T, class V>
void store_as(V value, void* out) {
  T v = static_cast<T>(value);
  std::memcpy(out, &v, sizeof v);
}

template <class V>
void store_value(ElementType type, V value, void* out) {
  switch (type) {
    case ElementType::boolean: store_as<uint8_t>(value != 0 ? 1 : 0, out); break;
    case ElementType::int8: store_as<int8_t>(value, out); break;
    case ElementType::uint8: store_as<uint8_t>(value, out); break;
    case ElementType::int16: store_as<int16_t>(value, out); break;
    case ElementType::int32: store_as<int32_t>(value, out); break;
    case ElementType::uint32: store_as<uint32_t>(value, out); break;
    case ElementType::int64: store_as<int64_t>(value, out); break;
    case ElementType::uint64: store_as<uint64_t>(value, out); break;
    case ElementType::float16: store_as<uint16_t>(float16_from_double(static_cast<double>(value)), out); break;
    case ElementType::bfloat16: store_as<uint16_t>(bfloat16_from_double(static_cast<double>(value)), out); break;
    case ElementType::float32: store_as<float>(value, out); break;
    case ElementType::float64: store_as<double>(value, out); break;
  }
}

}  // namespace

ElementType element_type_named(const std::string& name) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name) return t.type;
  }
  throw Error(Errc::invalid_argument, format("unknown dtype '%s' (dtypes: %s)", name.c_str(), kTypeNames));
}

size_t element_size(ElementType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t.size;
  }
  return 0;
}

bool is_floating(ElementType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t.floating;
  }
  return false;
}

uint16_t float16_from_double(double value) { return encode_small_float(value, 5, 10); }
double float16_to_double(uint16_t bits) { return decode_small_float(bits, 5, 10); }
uint16_t bfloat16_from_double(double value) { return encode_small_float(value, 8, 7); }
double bfloat16_to_double(uint16_t bits) { return decode_small_float(bits, 8, 7); }

void store_element(ElementType type, double value, void* out) { store_value(type, value, out); }
void store_element_int64(ElementType type, int64_t value, void* out) { store_value(type, value, out); }

}  // namespace iris::heap
