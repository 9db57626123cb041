#include "core/activity.hpp"

#include <chrono>
#include <mutex>

namespace iris::activity {
namespace {

std::mutex g_mutex;
std::string g_what;
double g_since = clock_seconds();

}  // namespace

double clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Scope::Scope(std::string what) {
  const double now = clock_seconds();
  std::lock_guard<std::mutex> lock(g_mutex);
  previous_ = std::move(g_what);
  previous_since_ = g_since;
  g_what = std::move(what);
  g_since = now;
}

Scope::~Scope() {
  const double now = clock_seconds();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_what = std::move(previous_);
  // Back to Lua: it runs from now on (a wait inside a wait resumes the outer one's count).
  g_since = g_what.empty() ? now : previous_since_;
}

Now current() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return Now{g_what, clock_seconds() - g_since};
}

}  // namespace iris::activity
