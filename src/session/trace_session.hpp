// A trace of the whole job (docs/tracing.md): started and stopped on every rank together, written by
// rank 0 as one Chrome-trace JSON file (Perfetto opens it) holding every rank's host spans, its
// device's kernels and the events kernels recorded, all on rank 0's clock.
//
// The pieces: core/trace records host spans; programs/device_timeline times launches and reads the
// device buffer; comm measures the ranks' clock offsets. This file puts them together, because only
// the session knows the ranks, the heap (where the device buffer lives) and the registry.
#pragma once

#include <cstdint>
#include <string>

namespace iris::session {

struct Session;

struct TraceOptions {
  std::string file;            // where the trace goes when stop names none ("" : stop must name one)
  uint32_t device_events = 0;  // capacity of the device buffer, in events; 0: kDefaultDeviceEvents
  size_t host_events = 0;      // the most host events kept per rank; 0: kDefaultHostEvents
};

constexpr uint32_t kDefaultDeviceEvents = 65536;
constexpr size_t kDefaultHostEvents = 1000000;

// What a rank measured, for iris.trace.stop()'s result (rank 0 also wrote the file).
struct TraceSummary {
  std::string file;
  uint64_t host_events = 0;
  uint64_t host_dropped = 0;
  uint64_t launches = 0;
  uint64_t device_events = 0;
  uint64_t device_overflow = 0;
  int64_t host_offset_ns = 0;        // this rank's clock minus rank 0's, at the start
  int64_t host_offset_error_ns = 0;  // the worse of the start's and the stop's measurement
  int64_t launch_pin_error_ns = 0;
  int64_t clock_pin_error_ns = 0;
};

// Collective. Throws Error(invalid_argument) when a trace is already on, Error(environment) on every
// rank when rank 0 cannot write options.file.
void trace_start(const TraceOptions& options);
// Collective: collects every rank's events on rank 0, which writes them to `file` (or the start's).
TraceSummary trace_stop(const std::string& file);
bool trace_running();

// Heap bytes iris.init adds to the heap it makes while a trace is on, so that the device buffer does
// not take the script's room.
size_t trace_heap_reserve();
// Collective, right after iris.init made the session: a running trace gets its device side.
void trace_session_started();
// The rank's stream was just waited for (ctx:synchronize(), ctx:barrier()).
void trace_synchronized();
// The job ends normally: a trace still on is stopped and written.
void trace_finish_job();

}  // namespace iris::session
