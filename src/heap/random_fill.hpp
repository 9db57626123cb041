// Random tensor contents (ctx:rand, ctx:randn, ctx:randint), generated on the host.
//
// Reproducible everywhere: std::mt19937_64 and std::seed_seq are specified bit for bit by the C++
// standard, and the conversions below are ours (the standard's distributions are not portable). A
// stream is (seed, stream, counter): the Lua side makes `stream` the rank for per-rank streams and
// `counter` the number of the call for the context's generator (docs/memory.md "Random streams").
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/element_types.hpp"

namespace iris::heap {

enum class Distribution {
  uniform = 0,  // [a, b), with exactly the dtype's precision, so a value never rounds up to b
  normal = 1,   // mean a, standard deviation b (Box-Muller)
  integer = 2,  // whole numbers in [a, b)
};

struct RandomStream {
  uint64_t seed = 0;
  uint64_t stream = 0;
  uint64_t counter = 0;
};

// Writes `count` elements of `type` at `out` (host memory). Throws Error(invalid_argument) for an
// integer range that is empty or does not fit the dtype.
void random_fill(void* out, ElementType type, size_t count, Distribution distribution, double a, double b,
                 const RandomStream& stream);

}  // namespace iris::heap
