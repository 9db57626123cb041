#include "core/files.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace iris::files {
namespace {

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// 16 hex digits nobody can guess ahead (getrandom; the clock and a counter where it fails).
std::string random_hex() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof value)) {
    static std::atomic<uint64_t> counter{0};
    value = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9e3779b97f4a7c15ull +
            counter.fetch_add(1);
  }
  return format("%016llx", static_cast<unsigned long long>(value));
}

// A new file beside `target` that nobody else can have prepared: O_EXCL and O_NOFOLLOW, so neither a
// file nor a symbolic link planted under the name is opened. Its name holds this process's id first
// (".NAME.tmp-<pid>-<random>"), so a sweep can tell whose it was. Returns the descriptor, or -1 with
// errno set.
int create_temporary(const std::string& target, mode_t mode, std::string* name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    *name = parent_of(target) + "/." + base_of(target) + format(".tmp-%d-", static_cast<int>(getpid())) + random_hex();
    const int fd = open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool write_all(int fd, const void* bytes, size_t size) {
  const auto* p = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a fifo (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

Read read_regular_file(const std::string& path, const ReadOptions& options, std::vector<uint8_t>* out,
                       std::string* problem, struct stat* info) {
  out->clear();
  // Looked at before it is opened: opening a device may do something by itself.
  struct stat before {};
  if ((options.follow_symlinks ? stat(path.c_str(), &before) : lstat(path.c_str(), &before)) != 0) {
    if (errno == ENOENT) return Read::missing;
    *problem = format("cannot be examined: %s", std::strerror(errno));
    return Read::refused;
  }
  if (!S_ISREG(before.st_mode)) {
    *problem = "is " + kind_of(before.st_mode) + ", not a regular file";
    return Read::refused;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (options.follow_symlinks ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ENOENT) return Read::missing;
    *problem = format("cannot be opened: %s", std::strerror(errno));
    return Read::refused;
  }
  struct stat now {};
  if (fstat(fd, &now) != 0 || !S_ISREG(now.st_mode) || now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
    close(fd);
    *problem = "changed while it was opened (it is not the regular file it was a moment before)";
    return Read::refused;
  }
  if (info != nullptr) *info = now;
  if (static_cast<unsigned long long>(now.st_size) > options.max_bytes) {
    close(fd);
    *problem = format("is larger than %s (%s)", human_bytes(options.max_bytes).c_str(),
                      human_bytes(static_cast<unsigned long long>(now.st_size)).c_str());
    return Read::refused;
  }
  out->reserve(static_cast<size_t>(now.st_size));
  uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      *problem = format("cannot be read: %s", std::strerror(errno));
      close(fd);
      out->clear();
      return Read::refused;
    }
    if (got == 0) break;
    out->insert(out->end(), buffer, buffer + got);
    if (out->size() > options.max_bytes) {  // it grew while being read
      close(fd);
      out->clear();
      *problem = format("is larger than %s", human_bytes(options.max_bytes).c_str());
      return Read::refused;
    }
  }
  close(fd);
  return Read::ok;
}

std::string replacement_target(const std::string& path, std::string* problem) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      *problem = format("cannot be examined: %s", std::strerror(errno));
      return "";
    }
    struct stat dir {};
    if (stat(parent_of(path).c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
      *problem = "is in a directory that does not exist (" + parent_of(path) + ")";
      return "";
    }
    return path;
  }
  if (S_ISREG(info.st_mode)) return path;
  if (!S_ISLNK(info.st_mode)) {
    *problem = "is " + kind_of(info.st_mode) + ", not a regular file: only a regular file is written or replaced";
    return "";
  }
  // A symbolic link is followed on purpose: its target is written, the link stays.
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) {
    *problem = format("is a symbolic link that leads nowhere (%s): name the file itself", std::strerror(errno));
    return "";
  }
  const std::string target = real;
  std::free(real);
  struct stat pointed {};
  if (stat(target.c_str(), &pointed) != 0) {
    *problem = format("is a symbolic link to %s, which cannot be examined: %s", target.c_str(), std::strerror(errno));
    return "";
  }
  if (!S_ISREG(pointed.st_mode)) {
    *problem = "is a symbolic link to " + target + ", which is " + kind_of(pointed.st_mode) +
               ", not a regular file: only a regular file is written or replaced";
    return "";
  }
  return target;
}

std::string check_replaceable(const std::string& path) {
  std::string problem;
  const std::string target = replacement_target(path, &problem);
  if (target.empty()) return problem;
  if (access(target.c_str(), F_OK) == 0 && access(target.c_str(), W_OK) != 0) {
    return format("cannot be written: %s", std::strerror(errno));
  }
  std::string temporary;
  const int fd = create_temporary(target, 0600, &temporary);
  if (fd < 0) return format("cannot be written: no file can be created in %s: %s", parent_of(target).c_str(), std::strerror(errno));
  close(fd);
  unlink(temporary.c_str());
  return "";
}

std::string replace_file(const std::string& path, const void* bytes, size_t size, mode_t mode, bool follow_symlink) {
  std::string problem;
  struct stat entry {};
  const std::string target = follow_symlink ? replacement_target(path, &problem) : path;
  if (target.empty()) return problem;
  if (!follow_symlink && lstat(path.c_str(), &entry) == 0 && S_ISDIR(entry.st_mode)) {
    return "is a directory, not a regular file: only a regular file is written or replaced";
  }
  std::string temporary;
  const int fd = create_temporary(target, mode, &temporary);
  if (fd < 0) return format("cannot be written: no file can be created in %s: %s", parent_of(target).c_str(), std::strerror(errno));
  struct stat old {};
  if (follow_symlink && stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode)) fchmod(fd, old.st_mode & 07777);
  const bool written = write_all(fd, bytes, size);
  const int write_error = errno;
  const bool closed = close(fd) == 0;
  if (!written || !closed) {
    const int error = !written ? write_error : errno;
    unlink(temporary.c_str());
    return format("cannot be written: %s", std::strerror(error));
  }
  if (rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    return format("cannot be written: %s", std::strerror(error));
  }
  return "";
}

}  // namespace iris::files
