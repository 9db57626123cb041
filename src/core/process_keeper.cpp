#include "core/process_keeper.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace iris::keeper {
namespace {

// Whether process `pid`'s environment holds exactly `entry` ("NAME=value").
bool carries(pid_t pid, const std::string& entry) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone, or another user's
  std::string environment;
  char buffer[8192];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || environment.size() > (size_t(1) << 20)) break;
    environment.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  for (size_t at = 0; at < environment.size();) {
    const size_t end = environment.find('\0', at);
    const size_t length = (end == std::string::npos ? environment.size() : end) - at;
    if (length == entry.size() && environment.compare(at, length, entry) == 0) return true;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return false;
}

std::vector<pid_t> tagged(const std::string& entry) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  const pid_t self = getpid();
  while (const dirent* d = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (end == d->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    if (carries(static_cast<pid_t>(pid), entry)) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

// The keeper: waits for the rank's end (the pipe closes), then ends what carries its tag.
[[noreturn]] void keep(int read_fd, const std::string& entry) {
  setsid();  // out of the terminal's and the launcher's signals to the rank's group
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2}) {
    ::signal(s, SIG_IGN);
  }
  // Hold nothing of the rank's: a launcher waits for its output pipes to close.
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd) {
    if (null >= 0) dup2(null, fd);
  }
  const long max_fd = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); ++fd) {
    if (fd != read_fd) close(fd);
  }
  char byte;
  for (;;) {
    const ssize_t n = read(read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
  }
  std::vector<pid_t> left = tagged(entry);
  for (pid_t pid : left) kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<pid_t> still;
    for (pid_t pid : left) {
      if (kill(pid, 0) == 0 && carries(pid, entry)) still.push_back(pid);  // a zombie has no environment
    }
    left.swap(still);
  }
  for (pid_t pid : left) kill(pid, SIGKILL);
  _exit(0);
}

}  // namespace

void start() {
  static bool started = false;
  if (started) return;
  started = true;
  unsigned long long random = 0;
  if (getrandom(&random, sizeof random, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof random)) {
    random = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char tag[64];
  std::snprintf(tag, sizeof tag, "%d-%016llx", static_cast<int>(getpid()), random);
  const std::string entry = std::string(kTagVariable) + "=" + tag;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t middle = fork();
  if (middle < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (middle == 0) {
    // The middle process ends at once, so the keeper is nobody's child to reap.
    if (fork() == 0) {
      close(fds[1]);
      keep(fds[0], entry);
    }
    _exit(0);
  }
  while (waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  // fds[1] stays open for this process's life (close-on-exec: what it runs does not hold it). The tag
  // goes into the environment after the fork: the keeper must not carry it itself.
  setenv(kTagVariable, tag, 1);
}

}  // namespace iris::keeper
