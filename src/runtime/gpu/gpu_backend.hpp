// What the cuda and hip backends do the same way, written once over a per-vendor adaptor, as mscclpp
// keeps CUDA and HIP in one source. `Api` is cuda::Api (cuda/cuda_api.hpp) or hip::Api
// (hip/hip_api.hpp): the vendor's types under common names (Status, Device, Stream, Event, Module,
// Function, IpcHandle), a few constants (the backend's name, success, not_ready, not_found, whether
// dynamic shared memory needs an opt-in) and one thin wrapper per vendor call, returning
// gpu::Returned (the status and the call's name, for messages).
//
// CudaBackend and HipBackend derive from GpuBackend<Api> and add only what really differs: how a
// thread binds the device (bind(): CUDA's explicit context, HIP's current device), opening the device
// and the code target, the heap's device memory (allocate_heap_memory(): fine-grained memory on AMD),
// peer access (reach_peer_gpu()) and loading a module.
//
// Ordering (backend.hpp): one non-blocking stream; every memory operation is enqueued on it and waited
// for before it returns; only launch() returns early. A second non-blocking stream (select_stream, made
// at its first use) takes launches while selected; events recorded on one stream and waited for on the
// other order them, and join_second() folds the second's work back into the main stream before anything
// that waits or runs on the main stream alone. Modules and events refer to the backend: the
// backend outlives them (the Runtime declares it first, so destroys it last).
//
// Captures (ctx:capture) are stream captures of that stream, relaxed, so that a kernel compiled inside
// one still loads; its module variables are written through a second stream meanwhile.
//
// The bodies: waiting and faults at the end of this file, memory in gpu/memory.hpp, modules, events
// and launches in gpu/execution.hpp, captures and graphs in gpu/graph.hpp. Each vendor compiles them once for its Api in its *_backend.cpp
// (`template class gpu::GpuBackend<cuda::Api>;`); its other files see an `extern template` and do not.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "runtime/backend.hpp"
#include "runtime/fault_report.hpp"
#include "runtime/gpu/device_sharing.hpp"
#include "runtime/gpu/launch_limits.hpp"
#include "runtime/gpu/poll_wait.hpp"
#include "runtime/gpu/vendor_call.hpp"

namespace iris::runtime::gpu {

template <class Api>
class GpuBackend : public Backend {
 public:
  using Status = typename Api::Status;
  using Returned = typename Api::Returned;

  const char* name() const override { return Api::name; }
  int device() const override { return device_; }
  std::string device_name() const override { return device_name_; }
  LaunchLimits launch_limits() const override { return limits_; }

  void* allocate_heap(size_t bytes) override;
  std::vector<uint8_t> export_heap() override;
  void* import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& handle, size_t bytes) override;
  void release_heaps() override;
  MappedHostBuffer allocate_mapped_host(size_t bytes) override;
  void free_mapped_host(MappedHostBuffer& buffer) override;

  void copy_to_host(void* host, const void* device, size_t bytes) override;
  void copy_from_host(void* device, const void* host, size_t bytes) override;
  void copy_device(void* dst, const void* src, size_t bytes) override;
  void copy_device_async(void* dst, const void* src, size_t bytes) override;
  void fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) override;
  bool host_addressable() const override { return false; }
  void proxy_copy(void* dst, const void* src, size_t bytes) override;
  void drain_before_copies(bool on) override { drain_before_copies_ = on; }

  void synchronize() override { wait_stream("waiting for the GPU"); }
  void select_stream(int which) override;
  void stream_wait(int waiter) override;
  std::string kernels_in_flight() const override { return faults_.in_flight(); }
  std::string device_identity() const override { return pci_bus_id(device_handle_); }
  std::string shared_device_advice() const override;
  // load_module() is the vendor's.
  void launch(Module& module, void* function, const LaunchConfig& config, void** args,
              const std::string& kernel_label) override;
  std::unique_ptr<Event> create_event() override;
  RawLaunchTimes time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args,
                                   int iterations) override;

  void begin_capture() override;
  void capture_launch(Module& module, void* function, const LaunchConfig& config, void** args,
                      const std::vector<size_t>& arg_bytes, const std::string& kernel_label) override;
  std::unique_ptr<Graph> end_capture(const std::string& label) override;
  void abort_capture() override;

  // --- for the backend's own modules and events (gpu/execution.hpp) -------------------------------------
  // Makes this backend's device current on the calling thread (a no-op when it already is): CUDA sets
  // its context, HIP selects the device.
  virtual void bind() = 0;
  // Throws for a failed vendor call: Error(device_fault) for sticky faults (naming the kernels in
  // flight and the mailbox report), else Error(kind) "<what>: <call> returned <error>".
  void check(Status result, const char* call, const std::string& what, Errc kind = Errc::environment) {
    if (result != Api::success) fail(result, call, what, kind);
  }
  void check(Returned returned, const std::string& what, Errc kind = Errc::environment) {
    check(returned.status, returned.call, what, kind);
  }
  // Waits for everything enqueued on the stream (polling, so Ctrl-C works).
  void wait_stream(const char* what);
  // Before a copy or a module load of the main thread: waits for launched work if drain_before_copies
  // (not while the stream is captured: nothing captured runs, and the stream cannot be waited for).
  void drain_for_proxy(const char* before = "a copy");
  // Waits until `event` has happened.
  void wait_event(typename Api::Event event, const char* what);
  void throw_if_faulted() const { faults_.throw_if_faulted(); }
  bool faulted() const { return faults_.faulted(); }
  // Writes a loaded module's variable: through the stream like any copy, or, while the stream is being
  // captured, through the second stream (the module is new: no kernel of it is in flight).
  void write_module_variable(void* device, const void* data, size_t bytes);
  // A graph's launches are in flight (Graph::launch): a fault names them.
  void graph_launched(const std::string& label) { faults_.launched(label); }
  // The main stream (timing events, graph replays, copies that wait).
  typename Api::Stream stream() const { return stream_; }
  // Where work goes now: the main stream, or the second one while it is selected.
  typename Api::Stream current_stream() const { return second_selected_ ? second_stream_ : stream_; }
  void* native_stream() const override { return current_stream(); }
  // Makes the main stream wait (an event, on the device) for the work enqueued on the second stream
  // since the last join; nothing when there is none.
  void join_second();

  const Api calls;  // the vendor calls this shared code makes

 protected:
  GpuBackend(const Api& api, const comm::Comm& comm)
      : calls(api), comm_(comm) {}

  [[noreturn]] void fail(Status result, const char* call, const std::string& what, Errc kind);
  // The start of the vendor's destructor: releases the heaps and binds the device for the vendor's own
  // releases. False when those are to be skipped: after a fault the device is unusable and every call
  // would fail (the process is ending anyway), or releasing failed (a warning says so).
  bool release_for_close();
  // The device memory of the symmetric heap, as the vendor allocates it; nullptr when the GPU has too
  // little memory left (allocate_heap() then says how much there is). Throws for other failures.
  virtual void* allocate_heap_memory(size_t bytes) = 0;
  // Before a heap exported on another GPU (ordinal `ordinal` in this process) is opened for `peer`:
  // checks that this GPU reaches that one and does what the vendor needs for the mapping.
  virtual void reach_peer_gpu(int ordinal, int peer) = 0;
  // The heap of `bytes` does not fit on this GPU: Error(environment) with the free and total memory.
  [[noreturn]] void throw_heap_too_large(size_t bytes) const;

  const comm::Comm& comm_;
  int device_ = -1;                          // the ordinal in this process
  typename Api::Device device_handle_ = {};  // the device as the vendor's calls take it
  int device_count_ = 0;
  std::string device_name_;
  DeviceLimits limits_;
  typename Api::Stream stream_ = nullptr;
  typename Api::Stream side_stream_ = nullptr;  // made at the first capture (write_module_variable)
  typename Api::Stream proxy_stream_ = nullptr;  // the host proxy's copies (proxy_copy), made at its first use
  // The second stream (select_stream) and the events that order it with the main one ([0]: recorded on
  // the main stream, [1]: on the second), made at its first use or at a capture's start.
  typename Api::Stream second_stream_ = nullptr;
  typename Api::Event order_events_[2] = {nullptr, nullptr};
  bool second_selected_ = false;
  bool drain_before_copies_ = false;  // drain_before_copies()
  bool second_unjoined_ = false;  // work went to the second stream since its last join
  FaultState faults_;

  void* heap_ = nullptr;
  size_t heap_bytes_ = 0;
  std::map<int, void*> peers_;  // rank -> its heap opened through IPC

 private:
  // Checks that a copy (or fill) was enqueued, and waits for it.
  void copy(Returned enqueued, const std::string& what);
  void fill_by_doubling(char* device, const void* pattern, size_t pattern_bytes, size_t count);
  // The local ordinal of the GPU on PCI bus `pci_bus_id`, or -1 when this process does not see it.
  int ordinal_of_bus(const std::string& pci_bus_id) const;
  std::string pci_bus_id(typename Api::Device device) const;
  // Checks a launch against the limits and, where the vendor needs it, opts the kernel in to the
  // dynamic shared memory it asks for. Returns the kernel as the vendor's type.
  typename Api::Function prepare_launch(Module& module, void* function, const LaunchConfig& config,
                                        const std::string& label);
  // Makes the second stream and its events, once.
  void make_second_stream();
  // Checks and enqueues a launch on the current stream (a launch, or a captured one).
  void enqueue(Module& module, void* function, const LaunchConfig& config, void** args, const std::string& label);
};

// --- waiting and faults --------------------------------------------------------------------------------

template <class Api>
void GpuBackend<Api>::fail(Status result, const char* call, const std::string& what, Errc kind) {
  faults_.throw_if_faulted();
  if (Api::is_device_fault(result)) faults_.raise(calls.error_text(result), call, device_, device_name_, mailbox_);
  throw Error(kind, format("%s: %s returned %s", what.c_str(), call, calls.error_text(result).c_str()));
}

template <class Api>
bool GpuBackend<Api>::release_for_close() {
  if (faults_.faulted()) return false;
  try {
    if (capturing_) abort_capture();
    release_heaps();
    bind();
    if (side_stream_ != nullptr) (void)calls.stream_destroy(side_stream_);  // best effort at teardown
    if (proxy_stream_ != nullptr) (void)calls.stream_destroy(proxy_stream_);
    if (second_stream_ != nullptr) (void)calls.stream_destroy(second_stream_);
    for (auto event : order_events_) {
      if (event != nullptr) (void)calls.event_destroy(event);
    }
  } catch (const Error& e) {
    log::write(log::Level::warning, format("%s: closing GPU %d: %s", Api::name, device_, e.what()));
    return false;
  }
  return true;
}

template <class Api>
void GpuBackend<Api>::wait_stream(const char* what) {
  refuse_while_capturing(what);  // a query of a captured stream would end its capture
  throw_if_faulted();
  bind();
  join_second();
  check(poll_while(Api::not_ready, [&] { return calls.stream_query(stream_); }, what), what);
  faults_.drained();
}

// Where processes take turns on a GPU (Api::processes_take_turns: NVIDIA's, unless MPS serves them),
// ranks sharing one are told how to start MPS.
template <class Api>
std::string GpuBackend<Api>::shared_device_advice() const {
  if constexpr (!Api::processes_take_turns) {
    return "";
  } else {
    int enabled = 0;
    const Returned asked = calls.mps_enabled(&enabled, device_handle_);  // drivers before CUDA 12.x do not know
    struct stat pipe;
    const bool daemon = stat(mps_control_pipe().c_str(), &pipe) == 0;
    return cuda_runs_processes_side_by_side(asked.status == Api::success, enabled, daemon) ? "" : mps_advice();
  }
}

template <class Api>
void GpuBackend<Api>::wait_event(typename Api::Event event, const char* what) {
  refuse_while_capturing(what);
  throw_if_faulted();
  bind();
  check(poll_while(Api::not_ready, [&] { return calls.event_query(event); }, what), what);
}

// --- the second stream ------------------------------------------------------------------------------------

template <class Api>
void GpuBackend<Api>::make_second_stream() {
  if (second_stream_ != nullptr) return;
  // At the device's highest priority: as a GEMM's blocks retire, the blocks of the collective that waits
  // on the second stream take the freed multiprocessors before the next GEMM's (overlap's chunks).
  int least = 0, greatest = 0;
  check(calls.stream_priority_range(&least, &greatest), "reading the streams' priorities");
  check(calls.stream_create_with_priority(&second_stream_, greatest), "creating the second stream");
  for (auto& event : order_events_) check(calls.event_create_for_order(&event), "creating an event that orders streams");
}

template <class Api>
void GpuBackend<Api>::select_stream(int which) {
  if (which != 0 && which != 1) throw Error(Errc::internal, format("select_stream(%d): stream 0 or 1", which));
  throw_if_faulted();
  bind();
  if (which == 1) {
    make_second_stream();
    second_unjoined_ = true;
  }
  second_selected_ = which == 1;
}

template <class Api>
void GpuBackend<Api>::stream_wait(int waiter) {
  if (waiter != 0 && waiter != 1) throw Error(Errc::internal, format("stream_wait(%d): stream 0 or 1", waiter));
  throw_if_faulted();
  bind();
  make_second_stream();
  const auto waiting = waiter == 1 ? second_stream_ : stream_;
  const auto waited = waiter == 1 ? stream_ : second_stream_;
  const auto event = order_events_[waiter == 1 ? 0 : 1];
  // An event's wait takes its latest record: recording it again later does not move this wait.
  check(calls.event_record(event, waited), "ordering the streams: recording an event");
  check(calls.stream_wait_event(waiting, event), "ordering the streams: waiting for an event");
  if (waiter == 0) second_unjoined_ = second_selected_;
}

template <class Api>
void GpuBackend<Api>::join_second() {
  if (!second_unjoined_ && !second_selected_) return;
  check(calls.event_record(order_events_[1], second_stream_), "joining the second stream: recording an event");
  check(calls.stream_wait_event(stream_, order_events_[1]), "joining the second stream: waiting for an event");
  second_unjoined_ = second_selected_;
}

}  // namespace iris::runtime::gpu
