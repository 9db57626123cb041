// The 16-bit floats (IEEE binary16 "float16" and "bfloat16") to and from doubles, on the host: element
// access, the host proxy's atomics and MPI's reductions of 16-bit floats use these. Conversions round to
// nearest, ties to even, as a C cast to a narrower float does.
#pragma once

#include <cstdint>

namespace iris {

uint16_t float16_from_double(double value);
double float16_to_double(uint16_t bits);
uint16_t bfloat16_from_double(double value);
double bfloat16_to_double(uint16_t bits);

}  // namespace iris
