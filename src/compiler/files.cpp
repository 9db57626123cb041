#include "compiler/files.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"

namespace iris::compiler {
namespace {

[[noreturn]] void fail(const char* what, const std::string& path, int error) {
  throw Error(Errc::environment, format("%s %s: %s", what, path.c_str(), std::strerror(error)));
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

void make_directories(const std::string& path) {
  if (path.empty()) return;
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) throw Error(Errc::environment, "cannot create directory " + path + ": a file is in the way");
    return;
  }
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create directory", path, errno);
}

std::string untrusted_because(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) fail("cannot examine", path, errno);
  if (info.st_uid != geteuid()) {
    return format("%s belongs to user %d, not to you (user %d)", path.c_str(), static_cast<int>(info.st_uid),
                  static_cast<int>(geteuid()));
  }
  if (info.st_mode & S_IWOTH) return format("%s is writable by every user (mode %03o)", path.c_str(), info.st_mode & 0777);
  if ((info.st_mode & S_IWGRP) && info.st_gid != getegid()) {
    return format("%s is writable by group %d, which is not yours (mode %03o)", path.c_str(),
                  static_cast<int>(info.st_gid), info.st_mode & 0777);
  }
  return "";
}

namespace {

// The process id in `name` right after `marker`, or 0.
long pid_after(const std::string& name, const std::string& marker) {
  const size_t at = name.find(marker);
  if (at == std::string::npos) return 0;
  const char* digits = name.c_str() + at + marker.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  return end != digits && pid > 0 ? pid : 0;
}

bool process_gone(long pid) { return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

void remove_stale_temporaries(const std::string& dir, const std::string& marker) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (marker[0] != '.' && name.rfind(marker, 0) != 0) continue;
    const long pid = pid_after(name, marker);
    struct stat info;
    if (pid == 0 || pid == getpid() || lstat(entry.path().c_str(), &info) != 0 || info.st_uid != geteuid()) continue;
    if (process_gone(pid)) remove_tree(entry.path().string());
  }
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return format("%ld.%u", static_cast<long>(getpid()), counter.fetch_add(1));
}

void write_file_atomically(const std::string& path, const void* data, size_t bytes) {
  make_directories(parent_of(path));
  const std::string temporary = path + ".tmp." + unique_suffix();
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write", temporary, errno);
  const auto* p = static_cast<const char*>(data);
  size_t left = bytes;
  while (left > 0) {
    const ssize_t written = write(fd, p, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      unlink(temporary.c_str());
      fail("cannot write", temporary, error);
    }
    p += written;
    left -= static_cast<size_t>(written);
  }
  close(fd);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    fail("cannot rename into place", path, error);
  }
}

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    fail("cannot read", path, errno);
  }
  out->clear();
  uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      fail("cannot read", path, error);
    }
    if (got == 0) break;
    out->insert(out->end(), buffer, buffer + got);
  }
  close(fd);
  return true;
}

std::string read_text_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, &bytes)) throw Error(Errc::invalid_argument, "cannot open " + path + ": no such file");
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace iris::compiler
