#include "comm/hang_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/job_end.hpp"

namespace iris::comm::hang {
namespace {

constexpr size_t kAnswerBytes = 16 * 1024;
constexpr size_t kEndingBytes = 1024;
// How long the asking rank waits for the answers before it prints what it has.
constexpr double kAnswerSeconds = 3;
// How long the watcher lets the Lua hook answer before it has the profiler sample compiled code, and
// how long in all before it answers without a traceback.
constexpr double kSampleAfterSeconds = 0.2;
constexpr double kHookSeconds = 1.5;
// How long a rank still runs after another gave up, before it ends itself.
constexpr double kEndingGraceSeconds = 10;
// A wait left this recently is what a rank "had just" been doing when the job-end notice comes.
constexpr double kJustLeftSeconds = 2;
// How often the watcher looks for ranks of the node that died, while something must be written then.
constexpr double kDeathCheckSeconds = 0.1;

// The board in the node's shared memory: one header, one slot per node-local rank. Atomics of these
// sizes are lock-free, hence usable between processes.
struct Header {
  std::atomic<uint32_t> asked;  // 1 once a rank asked where every rank is (once per job)
  std::atomic<int32_t> asker;   // that rank
  std::atomic<uint32_t> ending; // 1 once a rank gave up waiting: the job ends
  std::atomic<uint32_t> printed; // 1 once the asking rank printed the report
  char ending_text[kEndingBytes];
  // The job's abnormal end (announce_job_end): 2 while the first rank writes how, then 1.
  std::atomic<uint32_t> job_end;
  std::atomic<int32_t> job_end_rank;
  std::atomic<int32_t> job_end_code;
  std::atomic<uint32_t> job_end_written;  // 1 once the first rank has written everything
  char job_end_text[kEndingBytes];
};
struct Slot {
  std::atomic<uint32_t> answered;  // equal to Header::asked once `text` holds the answer
  std::atomic<int32_t> rank;
  std::atomic<int32_t> pid;
  std::atomic<uint32_t> finished;       // 1 once the rank finished its script (its end is no failure)
  std::atomic<uint32_t> job_end_done;   // 1 once it did its part of the job's abnormal end
  char text[kAnswerBytes];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the board needs lock-free atomics");

struct State {
  Settings settings;
  Header* header = nullptr;
  Slot* slots = nullptr;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::atomic<int> report_fd{STDERR_FILENO};
  std::atomic<bool> in_wait{false};  // the main thread is in a Wait: it answers itself
  std::atomic<bool> gave_up{false};  // this rank gave up waiting (and said so with its own error)

  // The last outer Wait this rank left: what it was waiting for and how long, for the job-end notice of
  // a rank whose wait ended (with an error, or just done) right before the notice came.
  std::mutex left_mutex;
  std::string left_doing;
  double left_after = 0, left_at = 0;

  std::mutex sources_mutex;
  std::function<std::string()> lua_traceback;
  std::function<void()> request_lua_answer;
  std::function<void()> sample_compiled_lua;
  std::function<std::string()> kernels_in_flight;

  // Main thread only: the report this rank asked for.
  bool asking = false;
  double asked_at = 0;
  bool printed = false;
};

// Never destroyed: the watcher thread reads it until the process ends.
State& state() {
  static State* s = new State();
  return *s;
}

Slot& own_slot() { return state().slots[state().local_rank]; }

void write_all(const std::string& text) {
  const int fd = state().report_fd.load();
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

std::string indented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

template <class F>
F source(F State::*member) {
  std::lock_guard<std::mutex> lock(state().sources_mutex);
  return state().*member;
}

// Writes this rank's answer to question `asked`, unless it gave one already.
void answer(uint32_t asked, const std::string& doing, double seconds, const std::string& traceback,
            const std::string& kernels) {
  static std::mutex answering;  // the main thread and the watcher may both try
  std::lock_guard<std::mutex> lock(answering);
  Slot& slot = own_slot();
  if (asked == 0 || slot.answered.load(std::memory_order_acquire) == asked) return;
  std::string text = format("  rank %d (pid %d): %s for %.1f s\n", state().rank, static_cast<int>(getpid()),
                            doing.c_str(), seconds);
  text += indented(traceback);
  if (!kernels.empty()) text += "    kernels in flight on its device: " + kernels + "\n";
  std::snprintf(slot.text, sizeof slot.text, "%s", text.c_str());
  slot.answered.store(asked, std::memory_order_release);
}

std::string call(const std::function<std::string()>& f) { return f ? f() : std::string(); }

std::string seconds_setting(double seconds) { return seconds > 0 ? format("%g s", seconds) : std::string("0 (never)"); }

// `head`: the report's first line, without its newline; `tail`: what happens next ("" : the ranks keep
// waiting until IRIS_HANG_TIMEOUT).
void print_report(const std::string& head, const std::string& tail = "") {
  State& s = state();
  std::string text = head + "; where every rank is:\n";
  for (int r = 0; r < s.local_size; ++r) {
    const Slot& slot = s.slots[r];
    if (slot.answered.load(std::memory_order_acquire) == 1) {
      text += slot.text;
    } else {
      text += format("  rank %d: no answer within %.0f s (busy outside Lua and iris, or stopped)\n",
                     slot.rank.load(), kAnswerSeconds);
    }
  }
  if (s.local_size < s.size) text += "  (ranks on other nodes report on their node)\n";
  if (!tail.empty()) {
    text += tail + "\n";
  } else {
    text += s.settings.give_up_after > 0
                ? format("The ranks keep waiting (one may be busy on purpose); once a rank has waited %s "
                         "(IRIS_HANG_TIMEOUT) the job ends.\n",
                         seconds_setting(s.settings.give_up_after).c_str())
                : std::string("The ranks keep waiting (IRIS_HANG_TIMEOUT=0: for as long as it takes).\n");
  }
  write_all(text);
  s.header->printed.store(1, std::memory_order_release);
}

bool all_answered(uint32_t asked) {
  State& s = state();
  for (int r = 0; r < s.local_size; ++r) {
    if (s.slots[r].answered.load(std::memory_order_acquire) != asked) return false;
  }
  return true;
}

// A rank of the node whose process is gone without having finished its script, or null.
const Slot* dead_slot() {
  State& s = state();
  for (int r = 0; r < s.local_size; ++r) {
    const Slot& slot = s.slots[r];
    const int pid = slot.pid.load();
    if (pid <= 0 || slot.finished.load() != 0) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) return &slot;
  }
  return nullptr;
}

// "was waiting in ctx:barrier() for 6.0 s", "was running Lua for 3.2 s", "had just stopped waiting in
// ctx:barrier() (after 6.0 s)": what this rank does, for the job-end notice.
std::string what_this_rank_does(double now) {
  State& s = state();
  const activity::Now doing = activity::current();
  if (!doing.what.empty()) return format("was %s for %.1f s", doing.what.c_str(), doing.seconds);
  std::lock_guard<std::mutex> lock(s.left_mutex);
  if (!s.left_doing.empty() && now - s.left_at < kJustLeftSeconds) {
    return format("had just stopped %s (after %.1f s)", s.left_doing.c_str(), s.left_after);
  }
  return format("was running Lua for %.1f s", doing.seconds);
}

// The watcher thread: answers for a main thread that is not in a Wait, and ends this rank once another
// gave up waiting and this one is still running.
void watch() {
  State& s = state();
  bool hook_requested = false, sampled = false;
  double hook_requested_at = 0, ending_seen_at = 0, deaths_checked_at = 0;
  uint32_t handled = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double now = activity::clock_seconds();
    const uint32_t asked = s.header->asked.load(std::memory_order_acquire);
    if (asked != 0 && handled != asked && !s.in_wait.load()) {
      const activity::Now doing = activity::current();
      if (own_slot().answered.load(std::memory_order_acquire) == asked) {
        handled = asked;
      } else if (!doing.what.empty()) {
        answer(asked, doing.what, doing.seconds, "", "");
        handled = asked;
      } else if (!hook_requested) {
        if (auto request = source(&State::request_lua_answer)) request();
        hook_requested = true;
        hook_requested_at = now;
      } else if (!sampled && now - hook_requested_at > kSampleAfterSeconds) {
        if (auto sample = source(&State::sample_compiled_lua)) sample();
        sampled = true;
      } else if (now - hook_requested_at > kHookSeconds) {
        answer(asked, "running Lua", doing.seconds,
               "no traceback: the Lua code does not stop for one (a C function that does not return, or a "
               "loop the JIT compiled while LuaJIT's profiler was taken by the script)",
               "");
        handled = asked;
      }
    }
    job_end::poll();  // a SIGTERM noted while something must still be written
    if (job_end::armed()) {
      // Another rank announced the job's abnormal end: do this rank's part (once per process).
      if (s.header->job_end.load(std::memory_order_acquire) == 1 &&
          own_slot().job_end_done.load(std::memory_order_acquire) == 0) {
        job_end::failed(s.header->job_end_text, s.header->job_end_code.load());
      }
      // A rank of the node that died without finishing: the launcher ends the job within a second or two
      // (SIGCONT, SIGTERM, then SIGKILL), which is time enough to write what was recorded.
      if (now - deaths_checked_at > kDeathCheckSeconds) {
        deaths_checked_at = now;
        if (const Slot* dead = dead_slot()) {
          job_end::failed(format("rank %d (pid %d) ended without finishing its script (killed, or its process died)",
                                 dead->rank.load(), dead->pid.load()),
                          1);
        }
      }
    }
    if (s.header->ending.load(std::memory_order_acquire) == 1 && ending_seen_at == 0) {
      ending_seen_at = now;
      if (!s.gave_up.load()) {
        write_all(format("iris-lua[rank %d]: the job ends: %s; this rank %s\n", s.rank, s.header->ending_text,
                         what_this_rank_does(now).c_str()));
      }
    }
    if (ending_seen_at != 0 && now - ending_seen_at > kEndingGraceSeconds) {
      std::fflush(stdout);
      job_end::failed(s.header->ending_text, 1);
      std::_Exit(1);
    }
  }
}

// The waits of the layers below comm (activity::WatchedWait): a Wait of their own.
struct WaitWatcher final : activity::WatchedWait::Watcher {
  WaitWatcher(const std::string& doing, bool may_ask) : wait(doing, may_ask) {}
  void poll() override { wait.poll(); }
  Wait wait;
};

std::unique_ptr<activity::WatchedWait::Watcher> watched_wait(const std::string& doing, bool may_ask) {
  return std::make_unique<WaitWatcher>(doing, may_ask);
}

}  // namespace

Settings settings_from_environment() {
  Settings s;
  s.report_after = env::seconds(env::Var::hang_report, s.report_after, true);
  s.give_up_after = env::seconds(env::Var::hang_timeout, s.give_up_after, true);
  return s;
}

size_t board_bytes(int local_size) { return sizeof(Header) + static_cast<size_t>(local_size) * sizeof(Slot); }

void start(const Settings& settings, void* board, int rank, int size, int local_rank, int local_size) {
  State& s = state();
  if (s.header != nullptr) return;
  if (board == nullptr) board = std::calloc(1, board_bytes(local_size));
  s.settings = settings;
  s.rank = rank;
  s.size = size;
  s.local_rank = local_rank;
  s.local_size = local_size;
  s.slots = reinterpret_cast<Slot*>(static_cast<char*>(board) + sizeof(Header));
  s.slots[local_rank].rank.store(rank);
  s.slots[local_rank].pid.store(static_cast<int32_t>(getpid()));
  s.header = static_cast<Header*>(board);
  activity::WatchedWait::set_factory(watched_wait);
  std::thread(watch).detach();
}

void set_lua_sources(std::function<std::string()> lua_traceback, std::function<void()> request_lua_answer,
                     std::function<void()> sample_compiled_lua) {
  std::lock_guard<std::mutex> lock(state().sources_mutex);
  state().lua_traceback = std::move(lua_traceback);
  state().request_lua_answer = std::move(request_lua_answer);
  state().sample_compiled_lua = std::move(sample_compiled_lua);
}

void set_kernels_in_flight(std::function<std::string()> kernels_in_flight) {
  std::lock_guard<std::mutex> lock(state().sources_mutex);
  state().kernels_in_flight = std::move(kernels_in_flight);
}

void answer_from_lua(const std::string& traceback) {
  State& s = state();
  if (s.header == nullptr) return;
  const activity::Now doing = activity::current();
  answer(s.header->asked.load(std::memory_order_acquire), "running Lua", doing.seconds, traceback,
         call(source(&State::kernels_in_flight)));
}

void set_report_fd(int fd) { state().report_fd.store(fd >= 0 ? fd : STDERR_FILENO); }

bool announce_job_end(const std::string& how, int exit_code) {
  State& s = state();
  if (s.header == nullptr) return true;
  uint32_t none = 0;
  if (!s.header->job_end.compare_exchange_strong(none, 2)) return false;
  std::snprintf(s.header->job_end_text, sizeof s.header->job_end_text, "%s", how.c_str());
  s.header->job_end_rank.store(s.rank);
  s.header->job_end_code.store(exit_code);
  s.header->job_end.store(1, std::memory_order_release);
  return true;
}

int job_end_leader() {
  State& s = state();
  return s.header != nullptr && s.header->job_end.load(std::memory_order_acquire) == 1 ? s.header->job_end_rank.load()
                                                                                      : -1;
}

void job_end_part_done() {
  if (state().header != nullptr) own_slot().job_end_done.store(1, std::memory_order_release);
}

std::vector<int> wait_for_job_end_parts(double seconds) {
  State& s = state();
  std::vector<int> missing;
  if (s.header == nullptr) return missing;
  const double deadline = activity::clock_seconds() + seconds;
  for (;;) {
    missing.clear();
    for (int r = 0; r < s.local_size; ++r) {
      const Slot& slot = s.slots[r];
      if (slot.job_end_done.load(std::memory_order_acquire) == 1) continue;
      const int pid = slot.pid.load();
      if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) continue;  // dead: nothing more will come
      missing.push_back(slot.rank.load());
    }
    if (missing.empty() || activity::clock_seconds() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return missing;
}

void job_end_written() {
  if (state().header != nullptr) state().header->job_end_written.store(1, std::memory_order_release);
}

void wait_for_job_end_written(double seconds) {
  State& s = state();
  if (s.header == nullptr) return;
  const double deadline = activity::clock_seconds() + seconds;
  while (s.header->job_end_written.load(std::memory_order_acquire) == 0 && activity::clock_seconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void mark_finished() {
  if (state().header != nullptr) own_slot().finished.store(1, std::memory_order_release);
}

void report_now(const std::string& what) {
  State& s = state();
  if (s.header == nullptr || s.size == 1 || s.settings.report_after <= 0) return;
  const double started = activity::clock_seconds();
  uint32_t none = 0;
  if (s.header->asked.compare_exchange_strong(none, 1)) {
    s.header->asker.store(s.rank);
    s.asking = true;
    s.asked_at = started;
  }
  const uint32_t asked = s.header->asked.load(std::memory_order_acquire);
  if (own_slot().answered.load(std::memory_order_acquire) != asked) {
    const activity::Now doing = activity::current();
    answer(asked, doing.what.empty() ? "running Lua" : doing.what, doing.seconds, call(source(&State::lua_traceback)),
           call(source(&State::kernels_in_flight)));
  }
  for (;;) {
    const double now = activity::clock_seconds();
    if (s.asking && !s.printed && (all_answered(asked) || now - s.asked_at > kAnswerSeconds)) {
      s.printed = true;
      print_report("iris-lua: hang report: a wait on rank " + std::to_string(s.rank) + "'s device gave up (" + what + ")",
                   "The device fault ends the job.");
    }
    // Another rank asks: this one waits for the report, so that its own end does not cut the report short.
    if (s.header->printed.load(std::memory_order_acquire) == 1 || now - started > kAnswerSeconds + 1) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Wait::Wait(std::string doing, bool may_ask)
    : doing_(std::move(doing)),
      activity_(doing_),
      started_(activity::clock_seconds()),
      may_ask_(may_ask),
      outer_(!state().in_wait.exchange(true)) {}

Wait::~Wait() {
  if (!outer_) return;
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.left_mutex);
    s.left_doing = doing_;
    s.left_at = activity::clock_seconds();
    s.left_after = s.left_at - started_;
  }
  s.in_wait.store(false);
}

void Wait::poll() {
  State& s = state();
  if (s.header == nullptr) return;
  const double now = activity::clock_seconds();
  const double waited = now - started_;
  uint32_t asked = s.header->asked.load(std::memory_order_acquire);
  if (asked == 0 && may_ask_ && s.settings.report_after > 0 && waited >= s.settings.report_after) {
    uint32_t none = 0;
    if (s.header->asked.compare_exchange_strong(none, 1)) {
      s.header->asker.store(s.rank);
      s.asking = true;
      s.asked_at = now;
    }
    asked = s.header->asked.load(std::memory_order_acquire);
  }
  if (asked != 0 && own_slot().answered.load(std::memory_order_acquire) != asked) {
    answer(asked, doing_, waited, call(source(&State::lua_traceback)),
           call(source(&State::kernels_in_flight)));
  }
  if (s.asking && !s.printed) {
    if (all_answered(asked) || now - s.asked_at > kAnswerSeconds) {
      s.printed = true;
      print_report(format("iris-lua: hang report (IRIS_HANG_REPORT=%s): rank %d has been %s for %.1f s",
                          seconds_setting(s.settings.report_after).c_str(), s.rank, doing_.c_str(), waited));
    }
  }
  if (s.settings.give_up_after > 0 && waited >= s.settings.give_up_after) {
    const std::string why = format("rank %d gave up after %.0f s %s (IRIS_HANG_TIMEOUT=%g)", s.rank, waited,
                                   doing_.c_str(), s.settings.give_up_after);
    uint32_t running = 0;
    // This rank says why with its own error: it writes no job-end notice, also when another rank gave
    // up first.
    s.gave_up.store(true);
    if (s.header->ending.compare_exchange_strong(running, 2)) {
      std::snprintf(s.header->ending_text, sizeof s.header->ending_text, "%s", why.c_str());
      s.header->ending.store(1, std::memory_order_release);
    }
    throw Error(Errc::hang, format("gave up after %.0f s %s (IRIS_HANG_TIMEOUT=%g): the job ends%s", waited,
                                   doing_.c_str(), s.settings.give_up_after,
                                   asked != 0 ? "; the hang report above says where every rank was" : ""));
  }
}

}  // namespace iris::comm::hang
