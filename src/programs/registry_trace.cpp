// The registry while a trace is on (registry.hpp, "Tracing"): traced twins of kernels compiled before
// the trace started, and launches and graph replays timed on the device.
#include "core/error.hpp"
#include "core/trace.hpp"
#include "programs/device_timeline.hpp"
#include "programs/registry.hpp"

namespace iris::programs {

bool compiled_traced(const ProgramSource& source) {
  for (const auto& define : source.defines) {
    if (define.first == kTraceDefine) return true;
  }
  return false;
}

DeviceTimeline& Registry::timeline() {
  if (!timeline_) timeline_ = std::make_unique<DeviceTimeline>(*this);
  return *timeline_;
}

// The kernel itself when its program was compiled traced; else the same kernel of the same source
// compiled with the define (compiled once, through the disk cache like any program). Its arguments
// are the same, so the launch's argument block serves both.
const Kernel& Registry::traced_variant(const Kernel& kernel) {
  auto known = traced_variants_.find(&kernel);
  if (known != traced_variants_.end()) return *known->second;
  const Kernel* variant = &kernel;
  if (kernel.program != nullptr && !compiled_traced(kernel.program->source())) {
    variant = &compile(kernel.program->source()).kernel(kernel.name);  // compile() adds the define
  }
  traced_variants_.emplace(&kernel, variant);
  return *variant;
}

void Registry::traced_launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args) {
  trace::Span span(kernel.name, "launch");  // first: it takes the script line the Lua side left
  const Kernel& traced = traced_variant(kernel);
  const uint64_t flow = ++launch_flows_;
  if (span) {
    span.args()
        .add("kernel", traced.label)
        .add("grid", format("%ux%ux%u", config.grid.x, config.grid.y, config.grid.z))
        .add("block", format("%ux%ux%u", config.block.x, config.block.y, config.block.z));
    if (config.shared_bytes != 0) span.args().add("shared_bytes", static_cast<unsigned long long>(config.shared_bytes));
  }
  timeline().launch(traced, config, args, flow, span.args().text());
  if (options_.launch_blocking) synchronize();
}

// A replay is one span whatever it holds: the host's call, and on the device from before its first
// kernel to after its last.
void Registry::traced_replay(runtime::Graph& graph, const std::string& label, int64_t times) {
  trace::Span span("replay", "launch");
  const uint64_t flow = ++launch_flows_;
  if (span) {
    span.args()
        .add("graph", label)
        .add("times", static_cast<long long>(times))
        .add("kernels", static_cast<unsigned long long>(graph.kernels()));
  }
  timeline().replay(graph, times, flow, span.args().text());
}

}  // namespace iris::programs
