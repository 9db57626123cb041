// The device half of a trace (docs/tracing.md): when each launch ran on the device, and the events
// kernels recorded with trace_begin/trace_end, both put on the host's steady clock.
//
// Two device clocks are involved, each pinned to the host clock by readings taken next to a host
// timestamp:
//   - the stream's events (Backend::Event) time each launch: an event recorded on an idle stream is
//     stamped between the host's readings before the record and after it completed; the shortest of a
//     few such tries pins it. Launches are resolved against the pins around them, drift included.
//   - the device clock kernels read (iris::detail::clock_ns) stamps trace_begin/trace_end: the
//     trace_clock kernel reads it while the host answers through mapped memory (a ping-pong, as NTP
//     measures clocks), at the start and the end of the trace.
// On the cpu backend both are the host's own clock, and the pins measure an offset of about zero:
// that is how the tests check the method.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "iris/impl/abi.h"
#include "runtime/backend.hpp"

namespace iris::programs {

class Registry;
struct Kernel;

// A device clock reading pinned to the host clock: the device read `device_ns` while the host clock
// was within host_ns +- error_ns.
struct ClockPin {
  int64_t host_ns = 0;
  int64_t device_ns = 0;
  int64_t error_ns = 0;
};

// What a stopped timeline measured, for the trace's metadata.
struct DeviceTimelineSummary {
  uint64_t launches = 0;
  uint64_t events = 0;         // trace_begin events written
  uint64_t overflow = 0;       // trace_begin events that did not fit in the buffer
  int64_t launch_pin_error_ns = 0;   // the worst pin of the stream's events
  int64_t clock_pin_error_ns = 0;    // the worst pin of the device clock
  int64_t clock_offset_ns = 0;       // device clock minus host clock at the start
  double clock_rate = 1.0;           // host ns per device ns between the two pins
};

// Names of trace event ids: Iris's (impl/abi.h's IRIS_TRACE_EVENTS), then the user's
// (iris.trace.names), else "event <id>".
std::string trace_event_name(uint32_t id);
void set_trace_event_name(uint32_t id, const std::string& name);

class DeviceTimeline {
 public:
  explicit DeviceTimeline(Registry& registry);
  ~DeviceTimeline();

  // The trace started: zeroes and enables the device buffer (null: none), pins both clocks. Waits
  // for the stream.
  void start(abi::TraceBuffer* buffer, uint32_t capacity);
  // Launches `kernel` between two stream events; `flow` links the host's launch span to the device's.
  // `described`: the launch span's arguments, which the kernel's span repeats.
  void launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args, uint64_t flow,
              const std::string& described);
  // Replays `graph` `times` times between two stream events: one device span named "replay".
  void replay(runtime::Graph& graph, int64_t times, uint64_t flow, const std::string& described);
  // The stream has just been waited for: pins the events again when the last pin is old, so that
  // long traces keep their precision.
  void synchronized();
  // The trace stops: records every launch's device span and every trace_begin event into the host
  // trace (core/trace), disables the buffer. Waits for the stream.
  DeviceTimelineSummary stop();

 private:
  struct Pin {
    std::unique_ptr<runtime::Event> event;
    int64_t host_ns = 0;
    int64_t error_ns = 0;
  };
  struct PendingLaunch {
    std::unique_ptr<runtime::Event> before, after;
    std::string name, args;
    uint64_t flow = 0;
  };

  // Runs `enqueue` (which puts device work on the stream) between two stream events; the device span
  // is named `name`.
  void timed(const std::string& name, uint64_t flow, const std::string& described,
             const std::function<void()>& enqueue);
  std::unique_ptr<runtime::Event> take_event();
  void pin_events();
  void resolve();
  ClockPin pin_device_clock();
  void record_device_events(const ClockPin& first, DeviceTimelineSummary* summary);

  Registry& registry_;
  abi::TraceBuffer* buffer_ = nullptr;
  uint32_t capacity_ = 0;
  std::vector<std::unique_ptr<runtime::Event>> spare_events_;
  std::vector<Pin> pins_;
  std::deque<PendingLaunch> pending_;
  ClockPin clock_start_;
  uint64_t launches_ = 0;
  int64_t worst_launch_pin_ = 0;
};

}  // namespace iris::programs
