#include "core/interrupt.hpp"

#include <atomic>

#include "core/error.hpp"

namespace iris::interrupt {
namespace {
std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
}  // namespace

void request() { g_requested.store(true, std::memory_order_relaxed); }
void clear() { g_requested.store(false, std::memory_order_relaxed); }
bool pending() { return g_requested.load(std::memory_order_relaxed); }

void check(const char* where) {
  if (g_requested.exchange(false)) throw Error(Errc::interrupted, format("interrupted in %s", where));
}

}  // namespace iris::interrupt
