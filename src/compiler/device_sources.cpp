#include "compiler/device_sources.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "compiler/files.hpp"
#include "compiler/hash.hpp"
#include "core/error.hpp"

namespace iris::compiler {

const std::string* find_embedded_kernel(const std::string& name) {
  static const std::map<std::string, std::string> kernels = [] {
    std::map<std::string, std::string> by_name;
    for (const EmbeddedSource* s = kEmbeddedDeviceSources; s->name != nullptr; ++s) {
      if (s->is_kernel) by_name.emplace(s->name, std::string(s->text, s->size));
    }
    return by_name;
  }();
  auto found = kernels.find(name);
  return found == kernels.end() ? nullptr : &found->second;
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
