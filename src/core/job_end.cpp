#include "core/job_end.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

namespace iris::job_end {
namespace {

std::atomic<Writer> g_writer{nullptr};
std::atomic<int> g_state{0};  // 0: not run, 1: running, 2: done
std::atomic<bool> g_sigterm{false};
std::mutex g_signal_mutex;
bool g_handler_installed = false;
struct sigaction g_previous_term;

void on_sigterm(int) { g_sigterm.store(true); }

}  // namespace

void set_writer(Writer writer) {
  g_writer.store(writer);
  std::lock_guard<std::mutex> lock(g_signal_mutex);
  if (writer != nullptr && !g_handler_installed) {
    struct sigaction action {};
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, &g_previous_term);
    g_handler_installed = true;
  } else if (writer == nullptr && g_handler_installed) {
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_handler_installed = false;
    // A SIGTERM noted while there was something to write still ends the process, now that there is not.
    if (g_sigterm.exchange(false)) raise(SIGTERM);
  }
}

bool armed() { return g_writer.load() != nullptr; }

void failed(const std::string& how, int exit_code) {
  int idle = 0;
  if (!g_state.compare_exchange_strong(idle, 1)) {
    // Another way out runs it: let it finish first (bounded: the writer's own waits are).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (g_state.load() != 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return;
  }
  if (Writer writer = g_writer.load()) {
    try {
      writer(how, exit_code);
    } catch (...) {
      // On the way out: nothing to report it to.
    }
  }
  g_state.store(2);
}

void poll() {
  if (!g_sigterm.load()) return;
  failed("the launcher ended this rank (SIGTERM): another rank died, or the job was aborted or killed", 143);
  std::lock_guard<std::mutex> lock(g_signal_mutex);
  if (g_handler_installed) {
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_handler_installed = false;
  }
  g_sigterm.store(false);
  raise(SIGTERM);
}

}  // namespace iris::job_end
