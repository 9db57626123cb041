#include "core/unnamed_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace iris::unnamed_memory {

int create(size_t bytes, std::string* why) {
  int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int tmpfile_error = errno;
    fd = memfd_create("iris", MFD_CLOEXEC);
    if (fd < 0) {
      *why = format("an unnamed file in /dev/shm: %s; memfd_create: %s", std::strerror(tmpfile_error), std::strerror(errno));
      return -1;
    }
  }
  int rc = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (rc == 0 && bytes > 0) rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    close(fd);
    *why = std::strerror(rc);
    return -1;
  }
  return fd;
}

int open_peer(pid_t pid, int fd, std::string* why) {
  const std::string path = format("/proc/%d/fd/%d", static_cast<int>(pid), fd);
  const int opened = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (opened >= 0) return opened;
  *why = path + ": " + std::strerror(errno);
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    *why += format("; pidfd_open: %s", std::strerror(errno));
    return -1;
  }
  const int taken = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  const int error = errno;
  close(pidfd);
  if (taken >= 0) return taken;  // close-on-exec, as pidfd_getfd always sets it
  *why += format("; pidfd_getfd: %s", std::strerror(error));
#endif
  return -1;
}

}  // namespace iris::unnamed_memory
