#include "repl/interrupts.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/interrupt.hpp"

namespace iris::repl {
namespace {

enum Phase : int { kBetweenCommands, kRunning, kWaitingForPeers, kReading };

// What an interrupted chunk raises (as luajit says it); the traceback shows where.
const char* const kInterrupted = "interrupted!";

// Everything the handler reads is a lock-free atomic or a plain array written before the handler is
// installed.
std::atomic<int> g_phase{kBetweenCommands};
std::atomic<int> g_presses{0};
std::atomic<int64_t> g_first_press_ns{0};
std::atomic<uint32_t> g_sequence{0};
// Other ranks: the command rank 0 last forwarded a Ctrl-C for (it may come before the command starts
// running here). Sequence numbers start at 1.
std::atomic<uint32_t> g_noticed_sequence{0};
std::atomic<bool> g_read_interrupted{false};
bool g_is_root = false;
bool g_installed = false;
struct sigaction g_previous;

constexpr int kMaxPeers = 4096;
pid_t g_peers[kMaxPeers];
int g_peer_count = 0;
char g_unreachable_note[512] = {0};
int g_console_fd = STDERR_FILENO;
std::atomic<void (*)()> g_cleanup{nullptr};

void write_console(const char* text) {
  ssize_t ignored = ::write(g_console_fd, text, std::strlen(text));
  (void)ignored;
}

void forward_to_peers() {
  union sigval value;
  value.sival_int = static_cast<int>(g_sequence.load());
  for (int k = 0; k < g_peer_count; ++k) ::sigqueue(g_peers[k], SIGINT, value);
  if (g_unreachable_note[0] != '\0') write_console(g_unreachable_note);
}

int64_t now_ns() {
  struct timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// A second press this soon after the first is the same impatient gesture, not a request to end.
constexpr int64_t kSecondPressAfterNs = 1000000000;

[[noreturn]] void end_process_now() {
  if (auto cleanup = g_cleanup.load()) cleanup();
  write_console("\niris-lua: the chunk did not stop at Ctrl-C (a rank is inside C code, in a loop compiled "
                "by the JIT, or out of reach); the second Ctrl-C ends iris-lua\n");
  ::signal(SIGINT, SIG_DFL);
  ::raise(SIGINT);
  ::_exit(130);  // not reached: SIGINT's default action ends the process
}

void on_sigint(int, siginfo_t* info, void*) {
  int saved_errno = errno;
  int phase = g_phase.load();
  if (!g_is_root) {
    // Other ranks hear from rank 0 (or from someone's kill): only a running chunk of the command the
    // notice names is interrupted; a notice for a command that has not started yet waits for it.
    bool from_rank0 = info != nullptr && info->si_code == SI_QUEUE;
    uint32_t sequence = from_rank0 ? static_cast<uint32_t>(info->si_value.sival_int) : g_sequence.load();
    if (from_rank0) g_noticed_sequence.store(sequence);
    if (phase == kRunning && sequence == g_sequence.load() && g_presses.fetch_add(1) == 0) {
      interrupt::interrupt_script(kInterrupted);
    }
  } else if (phase == kReading) {
    g_read_interrupted.store(true);
  } else if (phase == kRunning || phase == kWaitingForPeers) {
    if (g_presses.fetch_add(1) == 0) {
      g_first_press_ns.store(now_ns());
      if (phase == kRunning) interrupt::interrupt_script(kInterrupted);
      forward_to_peers();
    } else if (now_ns() - g_first_press_ns.load() >= kSecondPressAfterNs) {
      end_process_now();
    }
  }
  errno = saved_errno;
}

void set_handler(bool restart) {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigint;
  action.sa_flags = SA_SIGINFO | (restart ? SA_RESTART : 0);
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, g_installed ? nullptr : &g_previous);
  g_installed = true;
}

}  // namespace

void install_interrupts(bool is_root) {
  g_is_root = is_root;
  g_phase.store(kBetweenCommands);
  set_handler(/*restart=*/true);
}

void uninstall_interrupts() {
  if (!g_installed) return;
  ::sigaction(SIGINT, &g_previous, nullptr);
  g_installed = false;
  g_phase.store(kBetweenCommands);
  g_peer_count = 0;
  g_console_fd = STDERR_FILENO;
}

void set_interrupt_peers(const std::vector<pid_t>& local_peers, const std::string& unreachable_note) {
  g_peer_count = 0;
  for (pid_t pid : local_peers) {
    if (g_peer_count < kMaxPeers) g_peers[g_peer_count++] = pid;
  }
  std::snprintf(g_unreachable_note, sizeof g_unreachable_note, "%s", unreachable_note.c_str());
}

void set_interrupt_console(int fd) { g_console_fd = fd; }

void set_interrupt_cleanup(void (*cleanup)()) { g_cleanup.store(cleanup); }

void begin_command(uint32_t sequence) {
  g_sequence.store(sequence);
  g_presses.store(0);
  g_phase.store(g_is_root ? kWaitingForPeers : kBetweenCommands);
}

void begin_running() {
  g_phase.store(kRunning);
  // A Ctrl-C that came for this command before its chunk started here.
  if (g_is_root) {
    if (g_presses.load() > 0) interrupt::interrupt_script(kInterrupted);
  } else if (g_noticed_sequence.load() == g_sequence.load() && g_presses.fetch_add(1) == 0) {
    interrupt::interrupt_script(kInterrupted);
  }
}

void stop_running() {
  // First the phase (no new interrupt after this), then withdraw one that came before it.
  g_phase.store(g_is_root ? kWaitingForPeers : kBetweenCommands);
  interrupt::withdraw_script_interrupt();
}

int end_command() {
  g_phase.store(kBetweenCommands);
  return g_presses.load();
}

void begin_reading() {
  g_read_interrupted.store(false);
  g_phase.store(kReading);
  set_handler(/*restart=*/false);
}

bool end_reading() {
  set_handler(/*restart=*/true);
  g_phase.store(kBetweenCommands);
  return g_read_interrupted.exchange(false);
}

}  // namespace iris::repl
