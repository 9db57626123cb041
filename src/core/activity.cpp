#include "core/activity.hpp"

#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>
#include <mutex>
#include <vector>

namespace iris::activity {
namespace {

std::mutex g_mutex;
std::string g_what;
double g_since = clock_seconds();
std::atomic<WatchedWait::Factory> g_factory{nullptr};

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

namespace {

// utime + stime + cutime + cstime of one process, in seconds, and its parent; false when unreadable.
bool process_cpu(int pid, double* seconds, int* parent) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  char line[1024];
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  if (!read) return false;
  // "pid (comm) state ppid ...": the name may hold spaces and parentheses; the fields follow the last ')'.
  const char* rest = std::strrchr(line, ')');
  if (rest == nullptr) return false;
  char state = 0;
  int ppid = 0;
  unsigned long long utime = 0, stime = 0;
  long long cutime = 0, cstime = 0;
  if (std::sscanf(rest + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &state, &ppid, &utime,
                  &stime, &cutime, &cstime) != 6) {
    return false;
  }
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  *seconds = static_cast<double>(utime + stime + static_cast<unsigned long long>(cutime + cstime)) / ticks;
  *parent = ppid;
  return true;
}

}  // namespace

double tree_cpu_seconds(int root) {
  double total = 0;
  int parent = 0;
  if (!process_cpu(root, &total, &parent)) return -1;
  // Every process's parent, then the descendants of `root` among them.
  std::map<int, std::vector<std::pair<int, double>>> children;
  if (DIR* proc = opendir("/proc")) {
    while (const dirent* d = readdir(proc)) {
      char* end = nullptr;
      const long pid = std::strtol(d->d_name, &end, 10);
      if (end == d->d_name || *end != '\0' || pid <= 0 || pid == root) continue;
      double seconds = 0;
      int ppid = 0;
      if (process_cpu(static_cast<int>(pid), &seconds, &ppid)) children[ppid].push_back({static_cast<int>(pid), seconds});
    }
    closedir(proc);
  }
  std::vector<int> todo{root};
  while (!todo.empty()) {
    const int pid = todo.back();
    todo.pop_back();
    for (const auto& [child, seconds] : children[pid]) {
      total += seconds;
      todo.push_back(child);
    }
  }
  return total;
}

// The share of a CPU a process tree must use to count as at work: a compiler on a machine whose cores
// many processes share gets a small share, yet far more than the polling of a rank whose compiler sleeps
// (a look at /proc once a second, a few milliseconds).
constexpr double kProgressShare = 0.02;

ProcessWait::ProcessWait(std::string doing, int pid, bool may_ask)
    : doing_(std::move(doing)),
      pid_(pid),
      may_ask_(may_ask),
      wait_(std::make_unique<WatchedWait>(doing_, may_ask_)),
      looked_at_(clock_seconds()),
      cpu_seconds_(tree_cpu_seconds(pid)) {}

ProcessWait::~ProcessWait() = default;

void ProcessWait::poll() {
  const double now = clock_seconds();
  if (now - looked_at_ >= 1) {
    const double cpu = tree_cpu_seconds(pid_);
    if (cpu >= 0 && cpu_seconds_ >= 0 && cpu - cpu_seconds_ >= kProgressShare * (now - looked_at_)) {
      wait_.reset();  // at work: the wait starts again
      wait_ = std::make_unique<WatchedWait>(doing_, may_ask_);
    }
    looked_at_ = now;
    cpu_seconds_ = cpu;
  }
  wait_->poll();
}

void WatchedWait::set_factory(Factory factory) { g_factory.store(factory); }

WatchedWait::WatchedWait(const std::string& doing, bool may_ask) {
  if (Factory factory = g_factory.load()) {
    watcher_ = factory(doing, may_ask);
  } else {
    scope_ = std::make_unique<Scope>(doing);
  }
}

WatchedWait::~WatchedWait() = default;

void WatchedWait::poll() {
  if (watcher_) watcher_->poll();
}

}  // namespace iris::activity
