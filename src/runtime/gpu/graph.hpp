// The GPU backends' captures and graphs (ctx:capture, docs/graphs.md), written once over the vendor
// adaptor (gpu_backend.hpp): a stream capture of the backend's stream (relaxed, so a kernel compiled
// inside it still loads), the graph it made instantiated, launched on the same stream. Whatever else
// was enqueued on the stream during the capture (a vendor library given native_stream()) is in the
// graph too. Compiled where a vendor instantiates GpuBackend (cuda_backend.cpp, hip_backend.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "runtime/gpu/gpu_backend.hpp"

namespace iris::runtime::gpu {

template <class Api>
class GpuGraph final : public Graph {
 public:
  GpuGraph(GpuBackend<Api>& backend, typename Api::GraphExec exec, size_t kernels, std::string label)
      : backend_(backend), exec_(exec), kernels_(kernels), label_(std::move(label)) {}

  ~GpuGraph() override {
    // A graph in flight is released once it finishes (cuGraphExecDestroy, hipGraphExecDestroy).
    if (!backend_.faulted()) (void)backend_.calls.graph_exec_destroy(exec_);  // best effort, as for modules
  }

  void launch(int64_t times) override {
    backend_.refuse_while_capturing("replaying a graph");
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.join_second();
    for (int64_t i = 0; i < times; ++i) {
      const auto launched = backend_.calls.graph_launch(exec_, backend_.stream());
      if (launched.status != Api::success) {
        backend_.check(launched, format("replaying %s (replay %lld of %lld)", label_.c_str(),
                                        static_cast<long long>(i + 1), static_cast<long long>(times)),
                       Errc::launch);
      }
    }
    if (times > 0) backend_.graph_launched(label_);
  }

  size_t kernels() const override { return kernels_; }

 private:
  GpuBackend<Api>& backend_;
  typename Api::GraphExec exec_;
  size_t kernels_;
  std::string label_;
};

template <class Api>
void GpuBackend<Api>::begin_capture() {
  if (capturing_) throw Error(Errc::internal, "a capture is already in progress");
  throw_if_faulted();
  bind();
  // Work launched before the capture is not part of it; waiting here also reports its faults now.
  wait_stream("finishing the kernels launched before the capture");
  if (side_stream_ == nullptr) check(calls.stream_create(&side_stream_), "creating the stream captures write modules on");
  check(calls.begin_capture(stream_), "starting a capture of the stream");
  capturing_ = true;
}

template <class Api>
void GpuBackend<Api>::capture_launch(Module& module, void* function, const LaunchConfig& config, void** args,
                                     const std::vector<size_t>&, const std::string& kernel_label) {
  if (!capturing_) throw Error(Errc::internal, "capture_launch of " + kernel_label + " without a capture");
  enqueue(module, function, config, args, kernel_label);  // the driver copies the arguments into the graph
}

template <class Api>
std::unique_ptr<Graph> GpuBackend<Api>::end_capture(const std::string& label) {
  if (!capturing_) throw Error(Errc::internal, "end_capture without a capture");
  bind();
  // The second stream's captured work joins the main stream, so the capture ends joined.
  second_selected_ = false;
  join_second();
  typename Api::Graph graph = nullptr;
  const Returned ended = calls.end_capture(stream_, &graph);
  capturing_ = false;
  // The stream's capture became invalid (something the stream cannot capture was enqueued on it):
  // the driver says which error; nothing was recorded.
  check(ended, "ending the capture of the stream (" + label + ")", Errc::launch);
  size_t nodes = 0;
  typename Api::GraphExec exec = nullptr;
  Returned step = calls.graph_nodes(graph, &nodes);
  if (step.status == Api::success) step = calls.graph_instantiate(&exec, graph);
  (void)calls.graph_destroy(graph);  // the executable graph is a copy of its own
  check(step, "making the captured graph runnable (" + label + ")", Errc::launch);
  return std::make_unique<GpuGraph<Api>>(*this, exec, nodes, label);
}

template <class Api>
void GpuBackend<Api>::abort_capture() {
  if (!capturing_) return;
  capturing_ = false;
  bind();
  second_selected_ = false;
  if (second_unjoined_) {  // best effort: a capture made invalid refuses the join too
    (void)calls.event_record(order_events_[1], second_stream_);
    (void)calls.stream_wait_event(stream_, order_events_[1]);
    second_unjoined_ = false;
  }
  typename Api::Graph graph = nullptr;
  if (calls.end_capture(stream_, &graph).status == Api::success && graph != nullptr) (void)calls.graph_destroy(graph);
}

template <class Api>
void GpuBackend<Api>::write_module_variable(void* device, const void* data, size_t bytes) {
  if (!capturing_) return copy_from_host(device, data, bytes);
  throw_if_faulted();
  const std::string what = format("writing %s of module variables while capturing", human_bytes(bytes).c_str());
  check(calls.copy_from_host(device, data, bytes, side_stream_), what, Errc::internal);
  check(poll_while(Api::not_ready, [&] { return calls.stream_query(side_stream_); }, what.c_str()), what);
}

}  // namespace iris::runtime::gpu
