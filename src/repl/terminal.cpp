#include "repl/terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "repl/interrupts.hpp"

namespace iris::repl {
namespace {

constexpr unsigned char kCtrlC = 0x03;

// The modes to put back when the process is ended by a signal (read by the handlers).
int g_restore_fd = -1;
struct termios g_restore_modes;
struct sigaction g_previous_term, g_previous_hup;

void restore_terminal_modes() {
  if (g_restore_fd >= 0) ::tcsetattr(g_restore_fd, TCSANOW, &g_restore_modes);
}

void on_ending_signal(int signal_number) {
  restore_terminal_modes();
  ::sigaction(signal_number, signal_number == SIGTERM ? &g_previous_term : &g_previous_hup, nullptr);
  ::raise(signal_number);
}

// The launcher's standard stream `fd` ("/proc/<parent>/fd/<fd>"), opened anew; -1 when unreadable.
int open_launcher_stream(int fd) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(::getppid()), fd);
  return ::open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

bool same_terminal(int a, int b) {
  struct stat sa, sb;
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && S_ISCHR(sa.st_mode) && S_ISCHR(sb.st_mode) &&
         sa.st_rdev == sb.st_rdev;
}

}  // namespace

std::string transcript_path(bool under_launcher) {
  char link[64];
  if (under_launcher) {
    std::snprintf(link, sizeof link, "/proc/%d/fd/0", static_cast<int>(::getppid()));
  } else {
    std::snprintf(link, sizeof link, "/proc/self/fd/0");
  }
  struct stat st;
  if (::stat(link, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  char target[4096];
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) return {};
  std::string path(target, static_cast<size_t>(n));
  char here[4096];  // a file under the working directory is named from there, as a user would
  if (::getcwd(here, sizeof here) != nullptr) {
    const std::string prefix = std::string(here) + "/";
    if (path.compare(0, prefix.size(), prefix) == 0) path = path.substr(prefix.size());
  }
  return path;
}

struct TerminalRelay::State {
  int tty = -1;
  struct termios original;
  int keys = -1;                       // rank 0's standard input as mpirun gave it
  int saved_fds[3] = {-1, -1, -1};     // rank 0's standard streams before
  int wake[2] = {-1, -1};              // tells the relay thread to stop
  struct sigaction saved_ttou;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<unsigned char> pending;   // keys for the line editor
  bool ended = false;                  // mpirun closed the input
  std::atomic<bool> reading_line{false};
  pthread_t main_thread;               // where Ctrl-C is delivered (it runs the Lua code)

  // The relay thread: keys go to the line editor, except a Ctrl-C while no line is read.
  void relay_keys() {
    for (;;) {
      struct pollfd fds[2] = {{keys, POLLIN, 0}, {wake[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents != 0) return;
      unsigned char buffer[256];
      ssize_t n = ::read(keys, buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mutex);
      for (ssize_t k = 0; k < n; ++k) {
        if (buffer[k] == kCtrlC && !reading_line.load()) {
          ssize_t ignored = ::write(tty, "^C", 2);  // what the terminal would echo
          (void)ignored;
          ::pthread_kill(main_thread, SIGINT);
          continue;
        }
        pending.push_back(buffer[k]);
      }
      arrived.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex);
    ended = true;
    arrived.notify_all();
  }
};

TerminalRelay::TerminalRelay(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<TerminalRelay> TerminalRelay::start(bool* launcher_reads_terminal) {
  *launcher_reads_terminal = false;
  int in = open_launcher_stream(0);
  if (in < 0) return nullptr;
  if (!::isatty(in)) {
    ::close(in);
    return nullptr;
  }
  *launcher_reads_terminal = true;
  // Only when the launcher also writes to that terminal do the user's eyes and keys meet there.
  int out = open_launcher_stream(1);
  bool usable = out >= 0 && same_terminal(in, out);
  if (out >= 0) ::close(out);
  auto state = std::make_unique<State>();
  if (!usable || ::tcgetattr(in, &state->original) != 0 || ::pipe2(state->wake, O_CLOEXEC) != 0) {
    ::close(in);
    return nullptr;
  }
  state->tty = in;

  // A process outside the terminal's foreground group may change its modes with SIGTTOU ignored.
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGTTOU, &ignore, &state->saved_ttou);
  struct termios modes = state->original;
  modes.c_lflag &= ~(ICANON | ISIG | ECHO | IEXTEN);
  modes.c_cc[VMIN] = 1;
  modes.c_cc[VTIME] = 0;
  if (::tcsetattr(in, TCSADRAIN, &modes) != 0) {
    ::sigaction(SIGTTOU, &state->saved_ttou, nullptr);
    ::close(state->wake[0]);
    ::close(state->wake[1]);
    ::close(in);
    return nullptr;
  }
  g_restore_modes = state->original;
  g_restore_fd = in;
  struct sigaction ending;
  std::memset(&ending, 0, sizeof ending);
  ending.sa_handler = on_ending_signal;
  sigemptyset(&ending.sa_mask);
  ::sigaction(SIGTERM, &ending, &g_previous_term);
  ::sigaction(SIGHUP, &ending, &g_previous_hup);
  set_interrupt_cleanup(restore_terminal_modes);

  std::fflush(stdout);
  std::fflush(stderr);
  state->keys = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  for (int fd = 0; fd < 3; ++fd) state->saved_fds[fd] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::dup2(null, STDIN_FILENO);
  ::close(null);
  ::dup2(in, STDOUT_FILENO);
  ::dup2(in, STDERR_FILENO);

  // The relay thread blocks SIGINT (inherited mask), so a Ctrl-C the terminal might still send goes to
  // the main thread too.
  state->main_thread = ::pthread_self();
  sigset_t sigint, previous;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &sigint, &previous);
  State* raw = state.get();
  state->thread = std::thread([raw] { raw->relay_keys(); });
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return std::unique_ptr<TerminalRelay>(new TerminalRelay(std::move(state)));
}

TerminalRelay::~TerminalRelay() {
  State& s = *state_;
  ssize_t ignored = ::write(s.wake[1], "x", 1);
  (void)ignored;
  s.thread.join();
  std::fflush(stdout);
  std::fflush(stderr);
  for (int fd = 0; fd < 3; ++fd) {
    ::dup2(s.saved_fds[fd], fd);
    ::close(s.saved_fds[fd]);
  }
  ::tcsetattr(s.tty, TCSADRAIN, &s.original);
  set_interrupt_cleanup(nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  ::sigaction(SIGHUP, &g_previous_hup, nullptr);
  g_restore_fd = -1;
  ::sigaction(SIGTTOU, &s.saved_ttou, nullptr);
  ::close(s.keys);
  ::close(s.wake[0]);
  ::close(s.wake[1]);
  ::close(s.tty);
}

int TerminalRelay::terminal_fd() const { return state_->tty; }

void TerminalRelay::set_reading_line(bool reading) { state_->reading_line.store(reading); }

int TerminalRelay::next_byte() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.arrived.wait(lock, [&] { return !s.pending.empty() || s.ended; });
  if (s.pending.empty()) return -1;
  int byte = s.pending.front();
  s.pending.pop_front();
  return byte;
}

}  // namespace iris::repl
