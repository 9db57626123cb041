// Tracing behind the C boundary: thin wrappers over session/trace_session and core/trace.
#include "capi/capi_trace.h"

#include <cstdlib>
#include <string>

#include "capi/guard.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "programs/device_timeline.hpp"
#include "session/trace_session.hpp"

using namespace iris;

namespace {
std::string g_summary_file;
std::string g_requested;
}  // namespace

extern "C" {

int iris_trace_start(const char* file, uint32_t device_events, uint64_t host_events) {
  return capi::guarded([&] {
    session::TraceOptions options;
    options.file = file != nullptr ? file : "";
    options.device_events = device_events;
    options.host_events = static_cast<size_t>(host_events);
    session::trace_start(options);
  });
}

int iris_trace_stop(const char* file, iris_trace_summary* out) {
  return capi::guarded([&] {
    session::TraceSummary s = session::trace_stop(file != nullptr ? file : "");
    g_summary_file = s.file;
    out->file = g_summary_file.c_str();
    out->host_events = s.host_events;
    out->host_dropped = s.host_dropped;
    out->launches = s.launches;
    out->device_events = s.device_events;
    out->device_overflow = s.device_overflow;
    out->host_offset_ns = s.host_offset_ns;
    out->host_offset_error_ns = s.host_offset_error_ns;
    out->launch_pin_error_ns = s.launch_pin_error_ns;
    out->clock_pin_error_ns = s.clock_pin_error_ns;
  });
}

int iris_trace_running(void) { return session::trace_running() ? 1 : 0; }

const char* iris_trace_requested(void) {
  g_requested = env::get(env::Var::trace).value_or("");
  return g_requested.c_str();
}

int iris_trace_requested_events(uint32_t* events) {
  return capi::guarded([&] {
    // 0 when unset: the Lua side's default
    *events = env::trace_events(0);
  });
}

void iris_trace_origin(const char* line) { trace::set_origin(line != nullptr ? line : ""); }

void iris_trace_mark(const char* name, const char* args) {
  trace::instant(name, "user", args != nullptr ? args : "");
}

void iris_trace_span(const char* name, const char* category, int64_t start_ns, int64_t end_ns, const char* args) {
  trace::Event e;
  e.ts_ns = start_ns;
  e.dur_ns = end_ns > start_ns ? end_ns - start_ns : 0;
  e.name = name;
  e.category = trace::interned(category);
  e.args = args != nullptr ? args : "";
  trace::record(std::move(e));
}

int64_t iris_trace_now(void) { return trace::now_ns(); }

void iris_trace_name_event(uint32_t id, const char* name) { programs::set_trace_event_name(id, name); }

}  // extern "C"
