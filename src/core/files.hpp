// Reading and replacing files without being fooled by what a path names (docs/reliability.md):
//   - a reader takes regular files only: a fifo would block it forever, a device (/dev/zero) would feed
//     it without end; what it reads is bounded;
//   - a writer replaces a regular file (or creates one), never a device, fifo, socket or directory that
//     the path names, and follows a symbolic link on purpose: the file it points to gets the new
//     contents, the link stays. The new contents go to a temporary file created beside the target with
//     O_CREAT|O_EXCL|O_NOFOLLOW under an unpredictable name (nothing planted there is followed), then
//     renamed onto the target: readers see the old file or the whole new one.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iris::files {

// "a directory", "a fifo", "a character device", ...: what a mode's file is, for messages.
std::string kind_of(mode_t mode);

enum class Read { ok, missing, refused };
struct ReadOptions {
  size_t max_bytes = size_t(64) << 20;  // a larger file is refused, whatever it holds
  bool follow_symlinks = true;          // false: a symbolic link is refused (O_NOFOLLOW)
};
// Reads the regular file `path` into `out` (and its fstat into `info`, when given). `missing` when it
// does not exist; `refused` with `problem` set ("is a fifo, not a regular file", "is larger than 64 MiB",
// "cannot be read: Permission denied") for anything else that is not a readable regular file of at most
// max_bytes. Never blocks on a fifo, never reads more than max_bytes + 1 bytes.
Read read_regular_file(const std::string& path, const ReadOptions& options, std::vector<uint8_t>* out,
                       std::string* problem, struct stat* info = nullptr);

// The file that replacing `path` writes: `path` itself when it is a regular file or does not exist yet,
// the end of the chain when it is a symbolic link to one. Else "" with `problem` set: "is a character
// device, not a regular file", "is a symbolic link to /x, which is a fifo...", "is in a directory that
// does not exist".
std::string replacement_target(const std::string& path, std::string* problem);
// Whether replace_file(path) would succeed as far as can be known without writing it: the target is
// (or can be) a regular file, a file can be created in its directory, an existing one is writable.
// Returns "" or the problem, as replacement_target words it.
std::string check_replaceable(const std::string& path);
// Replaces (or creates) the file `path` names with `bytes` (see the top of this file). A new file gets
// `mode` (less the umask); a replaced one keeps its mode. Returns "" or the problem; nothing of a failed
// attempt stays. With `follow_symlink` false, whatever entry the path names (a link, a fifo) is replaced
// by the new file itself (for directories that belong to this program, as the kernel cache).
std::string replace_file(const std::string& path, const void* bytes, size_t size, mode_t mode = 0666,
                         bool follow_symlink = true);

}  // namespace iris::files
