// What this process's main thread is doing when it is not running Lua: waiting (for other ranks, the
// device, a compile on another rank), running a kernel (the cpu backend runs them inside the launch),
// compiling. A hang report (comm/hang_report.hpp) says it for a rank that cannot answer itself, so any
// thread may read it.
#pragma once

#include <string>

namespace iris::activity {

// Sets what the main thread does for the scope's lifetime ("in a kernel: put_ones (x.lua:3)"); the
// previous activity comes back afterwards.
class Scope {
 public:
  explicit Scope(std::string what);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  std::string previous_;
  double previous_since_;
};

struct Now {
  std::string what;  // "" when the main thread runs Lua (or has not started anything)
  double seconds;    // how long it has been doing that
};
Now current();

// Seconds on the steady clock, as the activities count them.
double clock_seconds();

}  // namespace iris::activity
