#include "core/log.hpp"

#include <cstdio>
#include <mutex>

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

bool parse_level(const std::string& text, Level* out) {
  for (int i = 0; i < 4; ++i) {
    if (text == kNames[i]) {
      *out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

void configure_from_environment() {
  auto value = env::get(env::Var::log_level);
  if (!value) return;
  if (!parse_level(*value, &g_threshold)) {
    throw Error(Errc::environment,
                format("IRIS_LOG_LEVEL=%s is not a level: use debug, info, warning or error", value->c_str()));
  }
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
