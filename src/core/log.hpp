// Rank-prefixed log lines on stderr: "[iris 1/4] warning: message". The level threshold comes from
// IRIS_LOG_LEVEL; ctx:info()/:warning() in Lua and the C++ core write through here.
#pragma once

#include <string>

namespace iris::log {

enum class Level { debug = 0, info = 1, warning = 2, error = 3 };

// Reads IRIS_LOG_LEVEL; an unknown value is an environment error naming the accepted ones.
void configure_from_environment();
void set_rank(int rank, int world_size);
bool enabled(Level level);
void write(Level level, const std::string& message);

// Whether what this process writes to stderr reaches a terminal: its own stderr, or under mpirun (whose
// ranks write to pipes) the launcher's. For notices only a person watching needs.
bool stderr_reaches_terminal();

}  // namespace iris::log
