// The host side of a trace (docs/tracing.md): what this rank did and when, on its steady clock, kept
// in memory while iris.trace is on and handed over whole when it stops. Every layer records through
// here; the session puts the ranks' records on one clock and writes the file.
//
// Off, recording costs one relaxed load: Span's constructor reads active() and does nothing else, and
// callers build arguments only inside `if (span)`.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace iris::trace {

// Nanoseconds on this process's steady clock (CLOCK_MONOTONIC): the clock of every host timestamp.
int64_t now_ns();

namespace detail {
extern std::atomic<bool> g_active;
}
inline bool active() { return detail::g_active.load(std::memory_order_relaxed); }

// Where an event is drawn: the rank's host thread, its device's kernels, or a block of them.
enum class Track : int { host = 0, device = 1, block = 2 };

struct Event {
  char phase = 'X';        // 'X' a span, 'i' an instant, 's'/'f' the start and end of a flow arrow
  int64_t ts_ns = 0;       // this rank's steady clock (device events are converted before they come here)
  int64_t dur_ns = 0;      // spans only
  Track track = Track::host;
  int block = 0;           // Track::block
  uint64_t flow = 0;       // 's'/'f': the arrow's id
  std::string name;
  const char* category = "";  // "init", "memory", "compile", "launch", "sync", "collective", "kernel", "user":
                              // a literal, or interned()
  std::string args;        // a JSON object's members without braces: "\"bytes\": 4096, \"op\": \"ctx:zeros()\""
};

// Builds the members of a JSON object: Args().add("bytes", 4096).add("op", "ctx:zeros()").text().
class Args {
 public:
  Args& add(const char* key, const std::string& value);
  Args& add(const char* key, const char* value) { return add(key, std::string(value)); }
  Args& add(const char* key, long long value);
  Args& add(const char* key, unsigned long long value);
  Args& add(const char* key, int value) { return add(key, static_cast<long long>(value)); }
  Args& add(const char* key, unsigned value) { return add(key, static_cast<unsigned long long>(value)); }
  Args& add(const char* key, long value) { return add(key, static_cast<long long>(value)); }
  Args& add(const char* key, unsigned long value) { return add(key, static_cast<unsigned long long>(value)); }
  Args& add(const char* key, double value);
  // A member whose value is already JSON text (an object or a number).
  Args& add_json(const char* key, const std::string& json);
  const std::string& text() const { return text_; }

 private:
  void key(const char* key);
  std::string text_;
};

// A copy of `text` that lives as long as the process (categories the Lua side names).
const char* interned(const std::string& text);

// `text` as a JSON string literal, quotes included.
std::string quote(const std::string& text);

// Starts recording afresh: what was recorded before is dropped. Not collective by itself
// (session/trace_session does the collective part).
void begin(size_t max_events);
// Stops recording and hands over what was recorded, in the order it was recorded; `dropped` receives
// how many events did not fit in max_events.
std::vector<Event> end(uint64_t* dropped);

// Records an event when recording (the events of one rank: called from the thread that runs Lua).
void record(Event event);
// An instant event on the host track.
void instant(const char* name, const char* category, const std::string& args = "");

// The script line the Lua side is working for ("pattern.lua:40"): the next spans carry it as "line".
// The Lua side sets it only while recording, right before the call it belongs to.
void set_origin(const std::string& line);

// A host span from construction to end() (or destruction), recorded only when active() at
// construction. Arguments added while it is open go into its record.
class Span {
 public:
  Span(const char* name, const char* category);
  Span(std::string name, const char* category);
  ~Span() { end(); }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  explicit operator bool() const { return recording_; }
  Args& args() { return args_; }
  // Ends the span now (later calls do nothing); returns its start time.
  int64_t end();
  int64_t start_ns() const { return start_; }

 private:
  bool recording_ = false;
  int64_t start_ = 0;
  std::string name_;
  const char* category_ = "";
  std::string origin_;
  Args args_;
};

}  // namespace iris::trace
