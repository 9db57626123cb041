// The device header (device/iris/**) and iris's own kernels (kernels/*.hip), embedded in the binary at
// build time (cmake/IrisDeviceSources.cmake), so kernels compile wherever the binary runs.
#pragma once

#include <cstddef>
#include <string>

namespace iris::compiler {

struct EmbeddedSource {
  const char* name;  // "iris/iris.hpp" (relative to device/) or "kernels/device_barrier.hip"
  const char* text;
  size_t size;
  bool is_kernel;    // kernels/ rather than the header
};

// Ends with an entry whose name is null.
extern const EmbeddedSource kEmbeddedDeviceSources[];

// One of iris's own kernel sources ("kernels/device_barrier.hip"), or null when the binary has none of
// that name. The text lives as long as the program.
const std::string* find_embedded_kernel(const std::string& name);

// A digest of every header file (names and contents): part of every cache key, so a changed header
// never reuses code compiled against the old one.
const std::string& device_header_digest();

// The header files written under `cache_dir`/include/<digest>/ (once; every rank and process of a node
// shares them). Returns that directory: what -I names for every compiler.
std::string materialize_device_headers(const std::string& cache_dir);

}  // namespace iris::compiler
