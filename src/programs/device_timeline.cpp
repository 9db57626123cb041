#include "programs/device_timeline.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "programs/registry.hpp"

namespace iris::programs {
namespace {

constexpr int kPinTries = 8;          // event pins: the tightest of these
// Device clock pins: ping-pong rounds, at least kClockMinRounds, more until one takes kClockGoodNs.
constexpr int kClockRounds = 1024;
constexpr int kClockMinRounds = 16;
constexpr int64_t kClockGoodNs = 10'000;
constexpr int64_t kClockBudgetNs = 500'000'000;
constexpr size_t kMaxPending = 4096;  // launches awaiting their timestamps before they are collected
constexpr int64_t kRepinAfterNs = 1'000'000'000;  // float milliseconds between events lose precision beyond

std::map<uint32_t, std::string>& user_event_names() {
  static std::map<uint32_t, std::string> names;
  return names;
}

}  // namespace

void set_trace_event_name(uint32_t id, const std::string& name) { user_event_names()[id] = name; }

std::string trace_event_name(uint32_t id) {
  switch (id) {
#define IRIS_TRACE_EVENT_NAME(name, number) \
  case number: return #name;
    IRIS_TRACE_EVENTS(IRIS_TRACE_EVENT_NAME)
#undef IRIS_TRACE_EVENT_NAME
    default: break;
  }
  auto known = user_event_names().find(id);
  return known != user_event_names().end() ? known->second : format("event %u", id);
}

DeviceTimeline::DeviceTimeline(Registry& registry) : registry_(registry) {}
DeviceTimeline::~DeviceTimeline() = default;

std::unique_ptr<runtime::Event> DeviceTimeline::take_event() {
  if (spare_events_.empty()) return registry_.backend().create_event();
  std::unique_ptr<runtime::Event> event = std::move(spare_events_.back());
  spare_events_.pop_back();
  return event;
}

// An event recorded on the idle stream is stamped between the host's readings around its record and
// its completion; the tightest of a few tries is the pin.
void DeviceTimeline::pin_events() {
  runtime::Backend& backend = registry_.backend();
  backend.synchronize();
  Pin best;
  best.error_ns = INT64_MAX;
  for (int k = 0; k < kPinTries; ++k) {
    std::unique_ptr<runtime::Event> event = take_event();
    const int64_t before = trace::now_ns();
    event->record();
    event->elapsed_ms_since(*event);  // waits for it
    const int64_t after = trace::now_ns();
    if ((after - before + 1) / 2 < best.error_ns) {
      if (best.event) spare_events_.push_back(std::move(best.event));
      best.event = std::move(event);
      best.host_ns = before + (after - before) / 2;
      best.error_ns = (after - before + 1) / 2;
    } else {
      spare_events_.push_back(std::move(event));
    }
  }
  worst_launch_pin_ = std::max(worst_launch_pin_, best.error_ns);
  pins_.push_back(std::move(best));
  resolve();
}

// Puts the launches recorded since the previous pin on the host clock, between that pin and the new
// one: the stream's clock is stretched to the host's between them, so drift does not accumulate.
void DeviceTimeline::resolve() {
  if (pins_.size() < 2) return;
  Pin& from = pins_[pins_.size() - 2];
  Pin& to = pins_.back();
  const double device_span_ms = to.event->elapsed_ms_since(*from.event);
  const double host_span_ns = static_cast<double>(to.host_ns - from.host_ns);
  const double rate = device_span_ms > 0 ? host_span_ns / (device_span_ms * 1e6) : 1.0;
  const auto on_host = [&](runtime::Event& event) {
    return from.host_ns + static_cast<int64_t>(std::llround(event.elapsed_ms_since(*from.event) * 1e6 * rate));
  };
  for (PendingLaunch& launch : pending_) {
    trace::Event span;
    span.ts_ns = on_host(*launch.before);
    span.dur_ns = std::max<int64_t>(0, on_host(*launch.after) - span.ts_ns);
    span.track = trace::Track::device;
    span.name = launch.name;
    span.category = "kernel";
    span.args = launch.args;
    trace::Event arrow;
    arrow.phase = 'f';
    arrow.ts_ns = span.ts_ns;
    arrow.track = trace::Track::device;
    arrow.flow = launch.flow;
    arrow.name = "launch";
    arrow.category = "launch";
    trace::record(std::move(span));
    trace::record(std::move(arrow));
    spare_events_.push_back(std::move(launch.before));
    spare_events_.push_back(std::move(launch.after));
  }
  pending_.clear();
  spare_events_.push_back(std::move(pins_.front().event));
  pins_.erase(pins_.begin(), pins_.end() - 1);  // only the newest pin is needed from now on
}

// The device clock kernels read, against the host clock: the trace_clock kernel (kernels/) answers
// the host's pings through mapped memory; the host side runs on a thread of its own, since a cpu
// backend's launch returns only once the kernel has finished.
ClockPin DeviceTimeline::pin_device_clock() {
  runtime::Backend& backend = registry_.backend();
  backend.synchronize();
  const Kernel& kernel = registry_.builtin("trace_clock").kernel("iris_trace_clock");
  runtime::MappedHostBuffer mapped = backend.allocate_mapped_host(sizeof(uint64_t) * (kClockRounds + 2));
  auto* slots = static_cast<uint64_t*>(mapped.host);
  std::vector<int64_t> sent(kClockRounds + 1), seen(kClockRounds + 1, -1);
  std::thread host_side([&] {
    // Rounds until one was quick (a busy machine may take the kernel's or this thread's core in the
    // middle of one), within a budget; then every remaining round is answered at once.
    const int64_t started = trace::now_ns();
    int64_t best = INT64_MAX;
    for (int i = 1; i <= kClockRounds; ++i) {
      sent[i] = trace::now_ns();
      __atomic_store_n(&slots[0], static_cast<uint64_t>(i), __ATOMIC_RELEASE);
      while (__atomic_load_n(&slots[1], __ATOMIC_ACQUIRE) < static_cast<uint64_t>(i)) {
        const int64_t now = trace::now_ns();
        if (now - started > kClockBudgetNs) {  // the kernel never started: let it run through
          __atomic_store_n(&slots[0], static_cast<uint64_t>(kClockRounds), __ATOMIC_RELEASE);
          return;
        }
        if (now - sent[i] > kClockGoodNs) std::this_thread::yield();  // this round is lost: let the kernel's core go
      }
      seen[i] = trace::now_ns();
      best = std::min(best, seen[i] - sent[i]);
      if (i >= kClockMinRounds && (best <= kClockGoodNs || seen[i] - started > kClockBudgetNs)) break;
    }
    __atomic_store_n(&slots[0], static_cast<uint64_t>(kClockRounds), __ATOMIC_RELEASE);
  });
  void* device_slots = mapped.device;
  int rounds = kClockRounds;
  void* args[] = {&device_slots, &rounds};
  runtime::LaunchConfig config;
  try {
    backend.launch(*kernel.module, kernel.function, config, args, kernel.label);
    backend.synchronize();
  } catch (...) {
    __atomic_store_n(&slots[0], static_cast<uint64_t>(kClockRounds), __ATOMIC_RELEASE);
    host_side.join();
    backend.free_mapped_host(mapped);
    throw;
  }
  host_side.join();
  ClockPin best;
  best.error_ns = INT64_MAX;
  for (int i = 1; i <= kClockRounds; ++i) {
    if (seen[i] < 0) continue;
    const int64_t error = (seen[i] - sent[i] + 1) / 2;
    if (error < best.error_ns) {
      best.error_ns = error;
      best.host_ns = sent[i] + (seen[i] - sent[i]) / 2;
      best.device_ns = static_cast<int64_t>(slots[1 + i]);
    }
  }
  backend.free_mapped_host(mapped);
  if (best.error_ns == INT64_MAX) {
    throw Error(Errc::internal, "iris.trace: the device clock kernel never answered the host within 0.5 s");
  }
  return best;
}

void DeviceTimeline::start(abi::TraceBuffer* buffer, uint32_t capacity) {
  buffer_ = buffer;
  capacity_ = capacity;
  launches_ = 0;
  worst_launch_pin_ = 0;
  pending_.clear();
  pins_.clear();
  if (buffer_ != nullptr) {
    abi::TraceBuffer header{};
    header.enabled = 1;
    header.capacity = capacity_;
    registry_.backend().copy_from_host(buffer_, &header, sizeof header);
  }
  clock_start_ = pin_device_clock();
  pin_events();
}

void DeviceTimeline::launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args, uint64_t flow,
                            const std::string& described) {
  runtime::Backend& backend = registry_.backend();
  timed(kernel.name, flow, described,
        [&] { backend.launch(*kernel.module, kernel.function, config, args, kernel.label); });
}

void DeviceTimeline::replay(runtime::Graph& graph, int64_t times, uint64_t flow, const std::string& described) {
  timed("replay", flow, described, [&] { graph.launch(times); });
}

void DeviceTimeline::timed(const std::string& name, uint64_t flow, const std::string& described,
                           const std::function<void()>& enqueue) {
  if (pins_.empty()) start(nullptr, 0);  // a registry of its own, without a session that started it
  PendingLaunch launch;
  launch.before = take_event();
  launch.after = take_event();
  trace::Event arrow;  // from the host's launch span (it starts before the kernel can)
  arrow.phase = 's';
  arrow.ts_ns = trace::now_ns();
  arrow.flow = flow;
  arrow.name = "launch";
  arrow.category = "launch";
  trace::record(std::move(arrow));
  launch.before->record();
  enqueue();
  launch.after->record();
  launch.name = name;
  launch.flow = flow;
  launch.args = described;
  pending_.push_back(std::move(launch));
  ++launches_;
  if (pending_.size() >= kMaxPending) {
    // Memory for the events is bounded: collect their timestamps now (this waits for the stream,
    // which the trace says).
    trace::instant("iris.trace: device timestamps collected", "trace");
    pin_events();
  }
}

void DeviceTimeline::synchronized() {
  if (!pins_.empty() && trace::now_ns() - pins_.back().host_ns > kRepinAfterNs) pin_events();
}

void DeviceTimeline::record_device_events(const ClockPin& first, DeviceTimelineSummary* summary) {
  runtime::Backend& backend = registry_.backend();
  abi::TraceBuffer header{};
  backend.copy_to_host(&header, buffer_, sizeof header);
  const uint64_t written = std::min<uint64_t>(header.next, capacity_);
  summary->events = written;
  summary->overflow = header.next - written;
  std::vector<abi::TraceRecord> records(written);
  if (written != 0) backend.copy_to_host(records.data(), buffer_ + 1, written * sizeof(abi::TraceRecord));
  header.enabled = 0;
  backend.copy_from_host(buffer_, &header, sizeof header.enabled);
  const auto on_host = [&](uint64_t device_ns) {
    const double since = static_cast<double>(static_cast<int64_t>(device_ns) - first.device_ns);
    return first.host_ns + static_cast<int64_t>(std::llround(since * summary->clock_rate));
  };
  for (const abi::TraceRecord& r : records) {
    trace::Event e;
    e.track = trace::Track::block;
    e.block = static_cast<int>(r.block);
    e.name = trace_event_name(r.id);
    e.category = "device";
    e.ts_ns = on_host(r.begin_ns);
    trace::Args args;
    args.add("id", r.id).add("block", r.block).add("unit", r.unit);
    if (r.target_rank >= 0) args.add("target_rank", r.target_rank);
    if (r.bytes != 0) args.add("bytes", static_cast<unsigned long long>(r.bytes));
    if (r.end_ns == 0) {
      e.phase = 'i';  // trace_end never came
      args.add("unfinished", std::string("trace_end was not reached"));
    } else {
      e.dur_ns = std::max<int64_t>(0, on_host(r.end_ns) - e.ts_ns);
    }
    e.args = args.text();
    trace::record(std::move(e));
  }
}

DeviceTimelineSummary DeviceTimeline::stop() {
  DeviceTimelineSummary summary;
  if (pins_.empty()) return summary;  // never started
  pin_events();
  const ClockPin clock_end = pin_device_clock();
  summary.launches = launches_;
  summary.launch_pin_error_ns = worst_launch_pin_;
  summary.clock_pin_error_ns = std::max(clock_start_.error_ns, clock_end.error_ns);
  summary.clock_offset_ns = clock_start_.device_ns - clock_start_.host_ns;
  const double device_span = static_cast<double>(clock_end.device_ns - clock_start_.device_ns);
  const double host_span = static_cast<double>(clock_end.host_ns - clock_start_.host_ns);
  // Drift is corrected only where the two pins measure it: when their errors are below a
  // millionth of the time between them (device clocks drift by some millionths against the host's).
  const double pin_errors = static_cast<double>(clock_start_.error_ns + clock_end.error_ns);
  summary.clock_rate = device_span > 0 && pin_errors < device_span * 1e-6 ? host_span / device_span : 1.0;
  if (buffer_ != nullptr) record_device_events(clock_start_, &summary);
  for (Pin& pin : pins_) spare_events_.push_back(std::move(pin.event));
  pins_.clear();
  return summary;
}

}  // namespace iris::programs
