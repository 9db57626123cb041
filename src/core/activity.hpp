// What this process's main thread is doing when it is not running Lua: waiting (for other ranks, the
// device, a compile on another rank), running a kernel (the cpu backend runs them inside the launch),
// compiling. A hang report (comm/hang_report.hpp) says it for a rank that cannot answer itself, so any
// thread may read it.
#pragma once

#include <memory>
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

// A wait of the main thread in a layer below comm (the kernel cache's lock, a compiler process), which
// comm's hang report watches as it watches its own waits (comm/hang_report.hpp) once comm has set the
// watcher: poll() in the wait's loop throws Error(hang) once the wait has lasted IRIS_HANG_TIMEOUT, and
// a wait that `may_ask` asks every rank where it is after IRIS_HANG_REPORT. Without a watcher (a
// program that embeds the compiler alone), it only sets the activity.
class WatchedWait {
 public:
  struct Watcher {
    virtual ~Watcher() = default;
    virtual void poll() = 0;
  };
  using Factory = std::unique_ptr<Watcher> (*)(const std::string& doing, bool may_ask);
  static void set_factory(Factory factory);

  explicit WatchedWait(const std::string& doing, bool may_ask = true);
  ~WatchedWait();
  WatchedWait(const WatchedWait&) = delete;
  WatchedWait& operator=(const WatchedWait&) = delete;
  void poll();

 private:
  std::unique_ptr<Scope> scope_;  // without a watcher
  std::unique_ptr<Watcher> watcher_;
};

// A wait for a process at work (a compiler; another rank compiling the kernel this one needs), watched
// as a WatchedWait but only while the process makes no progress: whenever it and its descendants used
// at least 2% of a CPU since the last look (once a second), the wait starts again. A compiler that
// works for minutes is never a hang; one that sleeps or waits on something that never comes is, after
// IRIS_HANG_TIMEOUT.
class ProcessWait {
 public:
  ProcessWait(std::string doing, int pid, bool may_ask);
  ~ProcessWait();
  ProcessWait(const ProcessWait&) = delete;
  ProcessWait& operator=(const ProcessWait&) = delete;
  void poll();

 private:
  std::string doing_;
  int pid_;
  bool may_ask_;
  std::unique_ptr<WatchedWait> wait_;
  double looked_at_;
  double cpu_seconds_;
};

// CPU seconds process `pid` and its living descendants have used, with the children they waited for
// (/proc); -1 when it is gone or cannot be read.
double tree_cpu_seconds(int pid);

}  // namespace iris::activity
