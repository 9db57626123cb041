// Byte sizes as users write them: 1073741824, "512MiB", "1GiB", "64 KiB", "2GB".
#pragma once

#include <cstdint>
#include <string>

namespace iris {

// Throws Error(invalid_argument) naming `what` (e.g. "heap_size") for anything it cannot read.
uint64_t parse_byte_size(const std::string& text, const char* what);

}  // namespace iris
