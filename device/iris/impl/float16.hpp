// 16-bit float types where the platform has none: iris::half on the cpu backend, iris::bfloat16 on the
// cpu backend and on HIP < 6. Storage is the IEEE binary16 / bfloat16 bit pattern (the same bytes a
// float16/bfloat16 tensor holds); arithmetic goes through float, conversions round to nearest even.
#ifndef IRIS_IMPL_FLOAT16_HPP
#define IRIS_IMPL_FLOAT16_HPP

namespace iris {
namespace detail {

IRIS_HOST_DEVICE unsigned int float_bits(float f) { return __builtin_bit_cast(unsigned int, f); }
IRIS_HOST_DEVICE float bits_float(unsigned int u) { return __builtin_bit_cast(float, u); }

// float -> binary16, round to nearest even; NaN stays NaN (quiet), overflow becomes infinity.
IRIS_HOST_DEVICE unsigned short float_to_half_bits(float value) {
  unsigned int f = float_bits(value);
  const unsigned int sign = f & 0x80000000u;
  f ^= sign;
  unsigned short out;
  if (f >= (127u + 16u) << 23) {                    // |value| >= 65536, infinity or NaN
    out = f > (255u << 23) ? 0x7e00 : 0x7c00;
  } else if (f < (113u << 23)) {                    // a binary16 subnormal or zero
    // Adding this magic number leaves the 10 mantissa bits at the bottom, rounded by the FPU.
    const unsigned int magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    out = static_cast<unsigned short>(float_bits(bits_float(f) + bits_float(magic)) - magic);
  } else {
    const unsigned int mantissa_odd = (f >> 13) & 1u;
    f += (static_cast<unsigned int>(15 - 127) << 23) + 0xfffu + mantissa_odd;
    out = static_cast<unsigned short>(f >> 13);
  }
  return static_cast<unsigned short>(out | (sign >> 16));
}

IRIS_HOST_DEVICE float half_bits_to_float(unsigned short h) {
  const unsigned int shifted_exponent = 0x7c00u << 13;
  unsigned int out = (h & 0x7fffu) << 13;
  const unsigned int exponent = shifted_exponent & out;
  out += (127u - 15u) << 23;
  if (exponent == shifted_exponent) {
    out += (128u - 16u) << 23;  // infinity or NaN
  } else if (exponent == 0) {
    out += 1u << 23;            // subnormal: renormalize through the FPU
    out = float_bits(bits_float(out) - bits_float(113u << 23));
  }
  return bits_float(out | (static_cast<unsigned int>(h & 0x8000u) << 16));
}

IRIS_HOST_DEVICE unsigned short float_to_bfloat16_bits(float value) {
  unsigned int f = float_bits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((f >> 16) | 0x40u);  // quiet NaN
  f += 0x7fffu + ((f >> 16) & 1u);
  return static_cast<unsigned short>(f >> 16);
}

IRIS_HOST_DEVICE float bfloat16_bits_to_float(unsigned short b) {
  return bits_float(static_cast<unsigned int>(b) << 16);
}

// The two types differ only in their conversions; both convert implicitly to and from float, so
// arithmetic and comparisons happen in float as they would on a GPU without native 16-bit math.
#define IRIS_DEFINE_FLOAT16_TYPE(Name, to_bits, to_float)                                          \
  struct Name {                                                                                    \
    unsigned short __x; /* the bit pattern, as CUDA's __half names it */                           \
    Name() = default;                                                                              \
    template <class T>                                                                             \
    IRIS_HOST_DEVICE Name(T value) : __x(to_bits(static_cast<float>(value))) {}                    \
    IRIS_HOST_DEVICE operator float() const { return to_float(__x); }                              \
    IRIS_HOST_DEVICE static Name from_bits(unsigned short bits) {                                  \
      Name n;                                                                                      \
      n.__x = bits;                                                                                \
      return n;                                                                                    \
    }                                                                                              \
    IRIS_HOST_DEVICE Name& operator+=(float v) { return *this = Name(float(*this) + v); }          \
    IRIS_HOST_DEVICE Name& operator-=(float v) { return *this = Name(float(*this) - v); }          \
    IRIS_HOST_DEVICE Name& operator*=(float v) { return *this = Name(float(*this) * v); }          \
    IRIS_HOST_DEVICE Name& operator/=(float v) { return *this = Name(float(*this) / v); }          \
  };

#if defined(IRIS_PLATFORM_CPU)
IRIS_DEFINE_FLOAT16_TYPE(Half, float_to_half_bits, half_bits_to_float)
#endif
IRIS_DEFINE_FLOAT16_TYPE(BFloat16, float_to_bfloat16_bits, bfloat16_bits_to_float)
#undef IRIS_DEFINE_FLOAT16_TYPE

}  // namespace detail
}  // namespace iris

// The CUDA spellings of the conversions, where the platform lacks them.
#if defined(IRIS_PLATFORM_CPU)
IRIS_HOST_DEVICE ::iris::detail::Half __float2half(float f) { return ::iris::detail::Half(f); }
IRIS_HOST_DEVICE float __half2float(::iris::detail::Half h) { return float(h); }
typedef ::iris::detail::Half __half;
#endif
#if defined(IRIS_PLATFORM_CPU) || (defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR < 6)
IRIS_HOST_DEVICE ::iris::detail::BFloat16 __float2bfloat16(float f) { return ::iris::detail::BFloat16(f); }
IRIS_HOST_DEVICE float __bfloat162float(::iris::detail::BFloat16 b) { return float(b); }
#endif

#endif  // IRIS_IMPL_FLOAT16_HPP
