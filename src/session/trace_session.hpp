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
// The job ends normally: a trace still on gets a last event saying how ("iris-lua: the job ended":
// `how`, "" for every rank finishing its script; `exit_code`), then is stopped and written.
void trace_finish_job(const std::string& how = "", int exit_code = 0);
// How the job ends when it is not the normal end but the trace can still be stopped the normal way (one
// rank whose script failed): trace_finish_job's last event says this instead.
void trace_note_job_end(const std::string& how, int exit_code);

// The job ends abnormally (core/job_end.hpp's writer while a trace is on; any thread): every rank of
// the node writes the host events it recorded into a part file beside the trace, and the rank that
// announced the end first merges the parts into the trace file (valid JSON, the same format) with a
// last event saying how the job ended, which ranks' parts are missing, and that the device events still
// in the devices' buffers are not there. No collective: the others may be anywhere.
void trace_write_after_failure(const std::string& how, int exit_code);

}  // namespace iris::session
