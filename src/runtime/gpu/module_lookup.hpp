// How looking up a kernel or a module variable fails, worded the same on every GPU backend.
#pragma once

#include <cstddef>
#include <string>

namespace iris::runtime::gpu {

// Error(invalid_argument) "kernel 'scale' is not in this module (cuModuleGetFunction returned ...)";
// `kind` is "kernel" or "module variable".
[[noreturn]] void throw_not_in_module(const char* kind, const std::string& symbol, const char* call,
                                      const std::string& driver_error);

// A module variable is written whole: Error(invalid_argument) unless `given` is its `size`.
void check_global_size(const std::string& symbol, size_t size, size_t given);

}  // namespace iris::runtime::gpu
