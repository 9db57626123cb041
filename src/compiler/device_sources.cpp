#include "compiler/device_sources.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "compiler/files.hpp"
#include "compiler/hash.hpp"
#include "core/error.hpp"

namespace iris::compiler {

std::string embedded_kernel_source(const std::string& name) {
  for (const EmbeddedSource* s = kEmbeddedDeviceSources; s->name != nullptr; ++s) {
    if (s->is_kernel && name == s->name) return std::string(s->text, s->size);
  }
  throw Error(Errc::internal, "iris kernel source '" + name + "' is not embedded in this binary");
}

const std::string& device_header_digest() {
  static const std::string digest = [] {
    Hasher hasher;
    for (const EmbeddedSource* s = kEmbeddedDeviceSources; s->name != nullptr; ++s) {
      if (s->is_kernel) continue;
      hasher.add(s->name);
      hasher.add(std::string(s->text, s->size));
    }
    return hasher.hex();
  }();
  return digest;
}

std::string materialize_device_headers(const std::string& cache_dir) {
  const std::string root = cache_dir + "/include/" + device_header_digest();
  // The directory is complete once its marker exists: files are written first, each atomically.
  const std::string marker = root + "/.complete";
  if (access(marker.c_str(), F_OK) == 0) return root;
  for (const EmbeddedSource* s = kEmbeddedDeviceSources; s->name != nullptr; ++s) {
    if (s->is_kernel) continue;
    write_file_atomically(root + "/" + s->name, s->text, s->size);
  }
  write_file_atomically(marker, "", 0);
  return root;
}

}  // namespace iris::compiler
