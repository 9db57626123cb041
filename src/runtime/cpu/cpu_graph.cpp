// The cpu backend's captures (ctx:capture, docs/graphs.md): each launch recorded as its module, kernel,
// configuration and a copy of its arguments' bytes, the way a CUDA graph's kernel node keeps them;
// a replay runs them again in order through the same executor as a launch, so it completes before
// launch() returns and a fault is kept for the next synchronize, as for any launch.
#include <cstring>

#include "core/error.hpp"
#include "runtime/cpu/cpu_backend.hpp"
#include "runtime/cpu/cpu_execution.hpp"
#include "runtime/cpu/cpu_graph.hpp"

namespace iris::runtime {

namespace {

constexpr size_t kArgumentAlignment = 16;  // more than any kernel argument needs (iris_context_data: 8)

}  // namespace

class CpuGraph final : public Graph {
 public:
  CpuGraph(CpuBackend& backend, std::vector<CpuRecordedLaunch> launches, std::string label)
      : backend_(backend), launches_(std::move(launches)), label_(std::move(label)) {}

  void launch(int64_t times) override {
    backend_.refuse_while_capturing("replaying a graph");
    std::vector<void*> args;
    for (int64_t i = 0; i < times; ++i) {
      for (CpuRecordedLaunch& l : launches_) {
        args.resize(l.offsets.size());
        for (size_t a = 0; a < l.offsets.size(); ++a) args[a] = l.bytes.data() + l.offsets[a];
        backend_.execution_->launch(*l.module, l.function, l.config, args.data(), l.label + " in " + label_,
                                    backend_.mailbox_);
      }
    }
  }

  size_t kernels() const override { return launches_.size(); }

 private:
  CpuBackend& backend_;
  std::vector<CpuRecordedLaunch> launches_;
  std::string label_;
};

void CpuBackend::begin_capture() {
  if (capturing_) throw Error(Errc::internal, "a capture is already in progress");
  execution_->synchronize();  // a faulted device records nothing
  recording_.clear();
  capturing_ = true;
}

void CpuBackend::capture_launch(Module& module, void* function, const LaunchConfig& config, void** args,
                                const std::vector<size_t>& arg_bytes, const std::string& kernel_label) {
  if (!capturing_) throw Error(Errc::internal, "capture_launch of " + kernel_label + " without a capture");
  CpuRecordedLaunch l;
  l.module = &module;
  l.function = function;
  l.config = config;
  l.label = kernel_label;
  size_t end = 0;
  for (size_t size : arg_bytes) {
    const size_t at = (end + kArgumentAlignment - 1) / kArgumentAlignment * kArgumentAlignment;
    l.offsets.push_back(at);
    end = at + size;
  }
  l.bytes.resize(end);
  for (size_t a = 0; a < arg_bytes.size(); ++a) std::memcpy(l.bytes.data() + l.offsets[a], args[a], arg_bytes[a]);
  recording_.push_back(std::move(l));
}

std::unique_ptr<Graph> CpuBackend::end_capture(const std::string& label) {
  if (!capturing_) throw Error(Errc::internal, "end_capture without a capture");
  std::vector<CpuRecordedLaunch> launches = std::move(recording_);
  recording_.clear();
  capturing_ = false;
  return std::make_unique<CpuGraph>(*this, std::move(launches), label);
}

void CpuBackend::abort_capture() {
  recording_.clear();
  capturing_ = false;
}

}  // namespace iris::runtime
