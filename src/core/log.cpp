#include "core/log.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/env.hpp"
#include "core/error.hpp"

namespace iris::log {
namespace {
Level g_threshold = Level::warning;
int g_rank = 0;
int g_world_size = 1;
std::mutex g_mutex;
const char* kNames[] = {"debug", "info", "warning", "error"};
}  // namespace

void configure_from_environment() {
  g_threshold = static_cast<Level>(
      env::choice(env::Var::log_level, {std::begin(kNames), std::end(kNames)}, static_cast<size_t>(g_threshold)));
}

bool stderr_reaches_terminal() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return ::isatty(STDERR_FILENO) == 1;
  char target[256];
  const std::string link = "/proc/" + std::to_string(::getppid()) + "/fd/2";
  const ssize_t length = ::readlink(link.c_str(), target, sizeof target - 1);
  if (length <= 0) return false;
  const std::string path(target, static_cast<size_t>(length));
  return path.rfind("/dev/pts/", 0) == 0 || path.rfind("/dev/tty", 0) == 0;
}

void set_rank(int rank, int world_size) {
  g_rank = rank;
  g_world_size = world_size;
}

bool enabled(Level level) { return level >= g_threshold; }

void write(Level level, const std::string& message) {
  if (!enabled(level)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "[iris %d/%d] %s: %s\n", g_rank, g_world_size, kNames[static_cast<int>(level)],
               message.c_str());
  std::fflush(stderr);
}

}  // namespace iris::log
