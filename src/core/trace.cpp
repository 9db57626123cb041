#include "core/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>

namespace iris::trace {
namespace detail {
std::atomic<bool> g_active{false};
}  // namespace detail

namespace {

struct Recorder {
  std::mutex mutex;
  std::vector<Event> events;
  size_t max_events = 0;
  uint64_t dropped = 0;
  std::string origin;
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* interned(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  return names.insert(text).first->c_str();
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void Args::key(const char* key) {
  if (!text_.empty()) text_ += ", ";
  text_ += quote(key) + ": ";
}

Args& Args::add(const char* k, const std::string& value) {
  key(k);
  text_ += quote(value);
  return *this;
}

Args& Args::add(const char* k, long long value) {
  key(k);
  text_ += std::to_string(value);
  return *this;
}

Args& Args::add(const char* k, unsigned long long value) {
  key(k);
  text_ += std::to_string(value);
  return *this;
}

Args& Args::add(const char* k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    text_ += "null";  // JSON has no NaN or infinity
  } else {
    char number[32];
    std::snprintf(number, sizeof number, "%.9g", value);
    text_ += number;
  }
  return *this;
}

Args& Args::add_json(const char* k, const std::string& json) {
  key(k);
  text_ += json;
  return *this;
}

void begin(size_t max_events) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.events.clear();
  r.events.reserve(std::min<size_t>(max_events, 1 << 16));
  r.max_events = max_events;
  r.dropped = 0;
  r.origin.clear();
  detail::g_active.store(true, std::memory_order_relaxed);
}

std::vector<Event> end(uint64_t* dropped) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  detail::g_active.store(false, std::memory_order_relaxed);
  if (dropped != nullptr) *dropped = r.dropped;
  r.origin.clear();
  return std::move(r.events);
}

void record(Event event) {
  if (!active()) return;
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.events.size() >= r.max_events) {
    ++r.dropped;
    return;
  }
  r.events.push_back(std::move(event));
}

void instant(const char* name, const char* category, const std::string& args) {
  if (!active()) return;
  Event e;
  e.phase = 'i';
  e.ts_ns = now_ns();
  e.name = name;
  e.category = category;
  e.args = args;
  record(std::move(e));
}

void set_origin(const std::string& line) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.origin = line;
}

namespace {
// The origin the Lua side left for this call, taken once: a nested span (the launch inside a device
// barrier) does not repeat it, and a later call without one does not inherit it.
std::string take_origin() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string origin;
  origin.swap(r.origin);
  return origin;
}
}  // namespace

Span::Span(const char* name, const char* category) : recording_(active()) {
  if (!recording_) return;
  name_ = name;
  category_ = category;
  origin_ = take_origin();
  start_ = now_ns();
}

Span::Span(std::string name, const char* category) : recording_(active()) {
  if (!recording_) return;
  name_ = std::move(name);
  category_ = category;
  origin_ = take_origin();
  start_ = now_ns();
}

int64_t Span::end() {
  if (!recording_) return start_;
  recording_ = false;
  Event e;
  e.ts_ns = start_;
  e.dur_ns = now_ns() - start_;
  e.name = std::move(name_);
  e.category = category_;
  if (!origin_.empty()) args_.add("line", origin_);
  e.args = args_.text();
  record(std::move(e));
  return start_;
}

}  // namespace iris::trace
