// Small file-system helpers of the compile pipeline (cache entries, headers, the host compiler's
// temporaries). Failures throw Error(environment) naming the path and the reason.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace iris::compiler {

// mkdir -p.
void make_directories(const std::string& path);
// Writes to a temporary file beside `path`, then renames it into place: readers see the old file, no
// file, or the whole new one, never a part. Creates missing parent directories.
void write_file_atomically(const std::string& path, const void* data, size_t bytes);
// The whole file; false if it does not exist.
bool read_file(const std::string& path, std::vector<uint8_t>* out);
std::string read_text_file(const std::string& path);
// A name unique to this process and call, for temporaries.
std::string unique_suffix();

}  // namespace iris::compiler
