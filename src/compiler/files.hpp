// Small file-system helpers of the compile pipeline (cache entries, headers, the host compiler's
// temporaries). Failures throw Error(environment) naming the path and the reason.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
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
// The same for a file or directory whose stat `info` is at hand.
std::string untrusted_because(const struct stat& info, const std::string& path);

// The temporaries this program leaves when a process is killed, each recognised by its whole name (and
// a directory in a place shared with others by a proof file inside): a sweep removes only those of
// processes of this user that are no longer running, never anything else that happens to look alike.
enum class Temporaries {
  compiles,       // the cache's tmp/: cxx-<pid>.<n> (the host compiler's scratch directories)
  entries,        // the cache's kernels/: .<digest>.bin.tmp-<pid>-<random> (entries being written)
  private_dirs,   // $TMPDIR: iris-lua-<pid>-XXXXXX holding its proof (make_private_directory)
};
void remove_stale_temporaries(const std::string& dir, Temporaries kind);
// A new directory $parent/iris-lua-<pid>-XXXXXX (mkdtemp, 0700) with the proof that this program made
// it, so that a later sweep removes it once this process is gone, and nothing a user named alike.
std::string make_private_directory(const std::string& parent);

// rm -r; best effort.
void remove_tree(const std::string& path);
// Writes to a new temporary file beside `path`, then renames it into place (core/files.hpp): readers
// see the old file, no file, or the whole new one, never a part. Whatever entry `path` names is
// replaced, a symbolic link included (for directories of this program's own). Creates missing parent
// directories.
void write_file_atomically(const std::string& path, const void* data, size_t bytes);
// The whole regular file; false if it does not exist. Throws Error(environment) for anything else that
// cannot be read (a fifo, a device, a file of more than 1 GiB), naming it.
bool read_file(const std::string& path, std::vector<uint8_t>* out);
std::string read_text_file(const std::string& path);
// A name unique to this process and call, for temporaries.
std::string unique_suffix();

}  // namespace iris::compiler
