/* Tracing (the Lua side is src/lua/iris/trace.lua; docs/tracing.md). Starting and stopping are
 * collective; the rest is this rank's own. */
#ifndef IRIS_CAPI_TRACE_H
#define IRIS_CAPI_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
/* What a rank measured; file: where rank 0 wrote the trace (valid until the next stop). */
typedef struct iris_trace_summary {
  const char* file;
  uint64_t host_events, host_dropped, launches, device_events, device_overflow;
  int64_t host_offset_ns, host_offset_error_ns, launch_pin_error_ns, clock_pin_error_ns;
} iris_trace_summary;

/* Collective. file: where stop writes ("": stop names it); 0 for either count: the default. */
int iris_trace_start(const char* file, uint32_t device_events, uint64_t host_events);
/* Collective. file "": the one start named. */
int iris_trace_stop(const char* file, iris_trace_summary* out);
int iris_trace_running(void);
/* IRIS_TRACE and IRIS_TRACE_EVENTS as set ("" and 0 when unset); a bad count is an environment error. */
const char* iris_trace_requested(void);
int iris_trace_requested_events(uint32_t* events);
/* The user's script line the next spans are recorded for ("pattern.lua:40"). */
void iris_trace_origin(const char* line);
/* Events on this rank's host track; args: the members of a JSON object ("\"n\": 3") or "". */
void iris_trace_mark(const char* name, const char* args);
void iris_trace_span(const char* name, const char* category, int64_t start_ns, int64_t end_ns, const char* args);
/* The clock of every host timestamp, in nanoseconds. */
int64_t iris_trace_now(void);
/* The name trace events of kernels with this id are shown by. */
void iris_trace_name_event(uint32_t id, const char* name);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
