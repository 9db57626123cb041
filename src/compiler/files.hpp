// Small file-system helpers of the compile pipeline (cache entries, headers, the host compiler's
// temporaries). Failures throw Error(environment) naming the path and the reason.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace iris::compiler {

// mkdir -p; what it creates is private to the user (0700): compiled code is only ever read from
// directories nobody else can write.
void make_directories(const std::string& path);
// Why code found in directory `path` could have been put there by someone else, or "" when it could
// not: a directory not owned by this user, or writable by others (by a group other than the user's
// own). Throws Error(environment) when `path` cannot be examined.
std::string untrusted_because(const std::string& path);
// Removes what processes of this user that are no longer running left in `dir`: entries whose name
// holds a process id right after `marker`, which starts the name ("cxx-" for "cxx-<pid>-3") or, when
// it starts with a dot, appears anywhere (".tmp." for "<entry>.tmp.<pid>.<n>"). Best effort.
void remove_stale_temporaries(const std::string& dir, const std::string& marker);
// rm -r; best effort.
void remove_tree(const std::string& path);
// Writes to a temporary file beside `path`, then renames it into place: readers see the old file, no
// file, or the whole new one, never a part. Creates missing parent directories.
void write_file_atomically(const std::string& path, const void* data, size_t bytes);
// The whole file; false if it does not exist.
bool read_file(const std::string& path, std::vector<uint8_t>* out);
std::string read_text_file(const std::string& path);
// A name unique to this process and call, for temporaries.
std::string unique_suffix();

}  // namespace iris::compiler
