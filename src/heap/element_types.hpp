// The element types of tensors (docs/memory.md, "Dtypes and conversions") as the C++ side needs them: sizes, and the
// 16-bit float formats, which neither the host compiler nor Lua can convert on their own.
//
// Conversions round to nearest, ties to even, straight from double (rounding through float first
// would round twice), overflow to infinity, and keep NaN a NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "iris/impl/abi.h"
#include "core/small_floats.hpp"

namespace iris::heap {

// The values are the dtype codes the Lua side and the device share (IRIS_DTYPE_CODES, impl/abi.h).
enum class ElementType {
  boolean = IRIS_DTYPE_bool, int8 = IRIS_DTYPE_int8, uint8 = IRIS_DTYPE_uint8, int16 = IRIS_DTYPE_int16,
  int32 = IRIS_DTYPE_int32, uint32 = IRIS_DTYPE_uint32, int64 = IRIS_DTYPE_int64, uint64 = IRIS_DTYPE_uint64,
  float16 = IRIS_DTYPE_float16, bfloat16 = IRIS_DTYPE_bfloat16, float32 = IRIS_DTYPE_float32, float64 = IRIS_DTYPE_float64
};
static_assert(IRIS_DTYPE_COUNT == 12, "a new dtype in IRIS_DTYPE_CODES needs its ElementType");

// "float32" -> ElementType::float32; throws Error(invalid_argument) naming the dtypes for anything else.
ElementType element_type_named(const std::string& name);
size_t element_size(ElementType type);
bool is_floating(ElementType type);

// (core/small_floats.hpp: the 16-bit floats to and from doubles, here under heap's names too)
using iris::bfloat16_from_double;
using iris::bfloat16_to_double;
using iris::float16_from_double;
using iris::float16_to_double;

// Writes `value` as one element of `type` at `out` (integers: truncated toward zero, as a C cast;
// the Lua side checks ranges before it asks).
void store_element(ElementType type, double value, void* out);
void store_element_int64(ElementType type, int64_t value, void* out);

}  // namespace iris::heap
