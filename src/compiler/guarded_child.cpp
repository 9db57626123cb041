#include "compiler/guarded_child.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.hpp"

extern char** environ;

namespace iris::compiler {
namespace {

// Exit statuses of the guardian itself, beyond any the command gives.
constexpr int kAbandoned = 124;     // killed the command because this process died or gave up
constexpr int kCannotStart = 125;   // fork failed, or this process was gone before it began

// Everything below runs in forked children of a multithreaded process: only async-signal-safe calls,
// no allocation (what they need is prepared before the fork).

// Removes the files of the flat directory `dir`, then the directory (getdents64: opendir allocates).
void remove_flat_directory(const char* dir) {
  const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buffer[4096];
    for (;;) {
      const long n = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* entry = reinterpret_cast<const Entry*>(buffer + at);
        const char* name = entry->name;
        if (!(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))) unlinkat(fd, name, 0);
        at += entry->reclen;
      }
    }
    close(fd);
  }
  rmdir(dir);
}

[[noreturn]] void run_command(char* const* argv, char* const* envp, int output, int input) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the guardian is gone: so is the command
  dup2(input, STDIN_FILENO);
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(argv[0], argv, envp);
  _exit(127);
}

[[noreturn]] void guard(pid_t parent, const sigset_t& watched, char* const* argv, char* const* envp, int output,
                        int input, const char* scratch) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) {  // it died before the request was in place
    remove_flat_directory(scratch);
    _exit(kAbandoned);
  }
  setpgid(0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t command = fork();
  if (command == 0) run_command(argv, envp, output, input);
  if (command < 0) _exit(kCannotStart);
  for (;;) {
    const int signal_number = sigwaitinfo(&watched, nullptr);
    if (signal_number == SIGCHLD) {
      int status = 0;
      for (pid_t reaped; (reaped = waitpid(-1, &status, WNOHANG)) > 0;) {
        if (reaped != command) continue;
        kill(-command, SIGKILL);  // anything of its group still running (normally nothing)
        while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
      }
    } else if (signal_number > 0) {  // SIGTERM (this process died, or gave up), SIGINT, SIGHUP
      kill(-command, SIGKILL);
      while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {  // every descendant: they are ours (subreaper)
      }
      remove_flat_directory(scratch);
      _exit(kAbandoned);
    }
  }
}

}  // namespace

int run_guarded(const GuardedCommand& command, const std::function<void()>& poll) {
  std::vector<char*> argv;
  for (const std::string& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> kept;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& set : command.environment) {
      replaced = replaced || entry.compare(0, set.find('=') + 1, set, 0, set.find('=') + 1) == 0;
    }
    if (!replaced) kept.push_back(entry);
  }
  kept.insert(kept.end(), command.environment.begin(), command.environment.end());
  std::vector<char*> envp;
  for (const std::string& e : kept) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const int output = open(command.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (output < 0) {
    throw Error(Errc::environment, format("cannot create %s: %s", command.output_path.c_str(), std::strerror(errno)));
  }
  const int input = open("/dev/null", O_RDONLY | O_CLOEXEC);
  sigset_t watched, previous;
  sigemptyset(&watched);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&watched, s);
  // Blocked across the fork, so the guardian has them pending for sigwaitinfo instead of running this
  // process's handlers.
  pthread_sigmask(SIG_BLOCK, &watched, &previous);
  const pid_t parent = getpid();
  const pid_t guardian = fork();
  if (guardian == 0) guard(parent, watched, argv.data(), envp.data(), output, input, command.scratch_dir.c_str());
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  close(output);
  if (input >= 0) close(input);
  if (guardian < 0) throw Error(Errc::environment, format("cannot start %s: %s", argv[0], std::strerror(fork_error)));

  int status = 0;
  try {
    for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
      const pid_t reaped = waitpid(guardian, &status, WNOHANG);
      if (reaped == guardian) break;
      if (reaped < 0 && errno != EINTR) {
        throw Error(Errc::environment, format("waiting for %s: %s", argv[0], std::strerror(errno)));
      }
      poll();
      std::this_thread::sleep_for(pause);
    }
  } catch (...) {
    kill(guardian, SIGTERM);
    while (waitpid(guardian, &status, 0) < 0 && errno == EINTR) {
    }
    throw;
  }
  if (!WIFEXITED(status)) return 128 + WTERMSIG(status);
  const int code = WEXITSTATUS(status);
  if (code == kCannotStart) throw Error(Errc::environment, format("cannot start %s: fork failed", argv[0]));
  if (code == 127) throw Error(Errc::environment, format("cannot run %s", argv[0]));
  return code;
}

}  // namespace iris::compiler
