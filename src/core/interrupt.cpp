#include "core/interrupt.hpp"

#include <atomic>

#include "core/error.hpp"

namespace iris::interrupt {
namespace {
std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
// What the script raises; null once it raised it or the request was withdrawn.
std::atomic<const char*> g_script_message{nullptr};
std::atomic<void (*)()> g_script_notifier{nullptr};
}  // namespace

void request() { g_requested.store(true, std::memory_order_relaxed); }
void clear() { g_requested.store(false, std::memory_order_relaxed); }
bool pending() { return g_requested.load(std::memory_order_relaxed); }

void check(const char* where) {
  if (g_requested.exchange(false)) throw Error(Errc::interrupted, format("interrupted in %s", where));
}

void interrupt_script(const char* message) {
  g_script_message.store(message);
  request();
  if (auto notify = g_script_notifier.load()) notify();
}

void withdraw_script_interrupt() {
  g_script_message.store(nullptr);
  clear();
}

void set_script_notifier(void (*notify)()) { g_script_notifier.store(notify); }

const char* take_script_message() { return g_script_message.exchange(nullptr); }

}  // namespace iris::interrupt
