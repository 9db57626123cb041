#include "compiler/guarded_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "compiler/files.hpp"
#include "core/error.hpp"

extern char** environ;

namespace iris::compiler {
namespace {

// Statuses the guardian reports beyond any the command gives.
constexpr int kCannotStart = 125;  // the scratch directory, its files or the fork failed
constexpr int kCannotRun = 127;    // execve failed (the command's child exits with it)

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

bool write_whole(const char* path, const char* data, size_t bytes) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = write(fd, data + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return close(fd) == 0;
}

// What the guardian needs, prepared before the fork.
struct Plan {
  pid_t parent;
  sigset_t watched;
  char* const* argv;
  char* const* envp;
  const char* scratch;
  const char* output;
  std::vector<const char*> file_paths;
  std::vector<const std::string*> file_contents;
  int report;  // the pipe's write end: the command's status goes there
};

[[noreturn]] void run_command(const Plan& plan, int output) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the guardian is gone: so is the command
  const int input = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (input >= 0) dup2(input, STDIN_FILENO);
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(plan.argv[0], plan.argv, plan.envp);
  _exit(kCannotRun);
}

// Kills the command's group and reaps every descendant (they are the guardian's: subreaper).
void end_command(pid_t command) {
  if (command > 0) kill(-command, SIGKILL);
  while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
}

// Waits until this process lets go (or dies), then removes the directory and exits.
[[noreturn]] void release_when_told(const Plan& plan) {
  for (;;) {
    const int signal_number = sigwaitinfo(&plan.watched, nullptr);
    if (signal_number > 0 && signal_number != SIGCHLD) break;
  }
  remove_flat_directory(plan.scratch);
  _exit(0);
}

void report(const Plan& plan, int status) {
  ssize_t ignored = write(plan.report, &status, sizeof status);
  (void)ignored;
}

[[noreturn]] void guard(const Plan& plan) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != plan.parent) _exit(kCannotStart);  // it died before the request was in place; nothing made yet
  setpgid(0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  bool ready = mkdir(plan.scratch, 0700) == 0;
  for (size_t i = 0; ready && i < plan.file_paths.size(); ++i) {
    ready = write_whole(plan.file_paths[i], plan.file_contents[i]->data(), plan.file_contents[i]->size());
  }
  const int output = ready ? open(plan.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
  const pid_t command = output >= 0 ? fork() : -1;
  if (command == 0) run_command(plan, output);
  if (command < 0) {
    report(plan, kCannotStart);
    release_when_told(plan);
  }
  for (;;) {
    const int signal_number = sigwaitinfo(&plan.watched, nullptr);
    if (signal_number == SIGCHLD) {
      int status = 0;
      for (pid_t reaped; (reaped = waitpid(-1, &status, WNOHANG)) > 0;) {
        if (reaped != command) continue;
        end_command(command);  // anything of its group still running (normally nothing)
        report(plan, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        release_when_told(plan);
      }
    } else if (signal_number > 0) {  // SIGTERM (this process died, or gave up), SIGINT, SIGHUP
      end_command(command);
      remove_flat_directory(plan.scratch);
      _exit(0);
    }
  }
}

// Lets the guardian go: it removes the directory and exits.
void release(pid_t guardian) {
  kill(guardian, SIGTERM);
  while (waitpid(guardian, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

int run_guarded(const GuardedCommand& command, const std::function<void(int guardian)>& poll,
                const std::function<void(const std::string& scratch_dir)>& read_results) {
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
  std::vector<std::string> paths;
  for (const auto& [name, contents] : command.files) paths.push_back(command.scratch_dir + "/" + name);
  const std::string output = command.scratch_dir + "/" + command.output_name;

  Plan plan{getpid(), {}, argv.data(), envp.data(), command.scratch_dir.c_str(), output.c_str(), {}, {}, -1};
  for (size_t i = 0; i < paths.size(); ++i) {
    plan.file_paths.push_back(paths[i].c_str());
    plan.file_contents.push_back(&command.files[i].second);
  }
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw Error(Errc::environment, format("cannot start %s: %s", argv[0], std::strerror(errno)));
  }
  plan.report = pipe_ends[1];
  sigemptyset(&plan.watched);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&plan.watched, s);
  // Blocked across the fork, so the guardian has them pending for sigwaitinfo instead of running this
  // process's handlers.
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &plan.watched, &previous);
  const pid_t guardian = fork();
  if (guardian == 0) guard(plan);
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  close(pipe_ends[1]);
  struct ReadEnd {
    int fd;
    ~ReadEnd() { close(fd); }
  } read_end{pipe_ends[0]};
  if (guardian < 0) throw Error(Errc::environment, format("cannot start %s: %s", argv[0], std::strerror(fork_error)));

  int status = -1;
  try {
    for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
      const ssize_t got = read(read_end.fd, &status, sizeof status);
      if (got == static_cast<ssize_t>(sizeof status)) break;
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {  // the guardian is gone without a word
        while (waitpid(guardian, nullptr, 0) < 0 && errno == EINTR) {
        }
        remove_tree(command.scratch_dir);
        throw Error(Errc::environment, format("running %s: the process watching it ended unexpectedly", argv[0]));
      }
      poll(guardian);
      std::this_thread::sleep_for(pause);
    }
    if (status == kCannotStart) {
      throw Error(Errc::environment, format("cannot start %s in %s", argv[0], command.scratch_dir.c_str()));
    }
    if (status == kCannotRun) throw Error(Errc::environment, format("cannot run %s", argv[0]));
    read_results(command.scratch_dir);
  } catch (...) {
    release(guardian);
    throw;
  }
  release(guardian);
  return status;
}

}  // namespace iris::compiler
