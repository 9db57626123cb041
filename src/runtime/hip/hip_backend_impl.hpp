// The hip backend's class, shared by its three source files (the same shape as the cuda backend):
//   hip_backend.cpp  device choice, stream, waiting, faults
//   hip_memory.cpp   symmetric heap (fine-grained memory, IPC), mapped host memory, copies, fills
//   hip_kernels.cpp  modules, launches, events, the raw-launch reference
//
// HIP has no explicit contexts: the device is selected per thread (hipSetDevice) and the runtime
// keeps one context per device and process. One non-blocking stream; every memory operation is
// enqueued on it and waited for before it returns; only launch() returns early. Modules and events
// refer to the backend, which outlives them.
#pragma once

#include <hip/hip_runtime_api.h>

#include <map>
#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/gpu/fault_report.hpp"
#include "runtime/gpu/launch_limits.hpp"
#include "runtime/hip/hip_runtime.hpp"

namespace iris::runtime {

class HipBackend final : public Backend {
 public:
  explicit HipBackend(const comm::Comm& comm);
  ~HipBackend() override;

  const char* name() const override { return "hip"; }
  int device() const override { return device_; }
  std::string device_name() const override { return device_name_; }
  CodeTarget code_target() const override { return CodeTarget{"hiprtc", arch_}; }

  void* allocate_heap(size_t bytes) override;
  std::vector<uint8_t> export_heap() override;
  void* import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& handle, size_t bytes) override;
  void release_heaps() override;
  MappedHostBuffer allocate_mapped_host(size_t bytes) override;
  void free_mapped_host(MappedHostBuffer& buffer) override;

  void copy_to_host(void* host, const void* device, size_t bytes) override;
  void copy_from_host(void* device, const void* host, size_t bytes) override;
  void copy_device(void* dst, const void* src, size_t bytes) override;
  void fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) override;
  bool host_addressable() const override { return false; }

  void synchronize() override;
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code) override;
  void launch(Module& module, void* function, const LaunchConfig& config, void** args,
              const std::string& kernel_label) override;
  std::unique_ptr<Event> create_event() override;
  double time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args,
                           int iterations) override;

  // --- for the backend's own modules and events -----------------------------------------------------
  // Selects this backend's device on the calling thread (a no-op when it already is).
  void bind();
  // Throws for a failed runtime call: Error(device_fault) for sticky faults (naming the kernels in
  // flight and the mailbox report), else Error(kind) "<what>: <call> returned <error>".
  void check(hipError_t result, const char* call, const std::string& what, Errc kind = Errc::environment);
  void wait_stream(const char* what);
  void wait_event(hipEvent_t event, const char* what);
  void throw_if_faulted() const { faults_.throw_if_faulted(); }
  bool faulted() const { return faults_.faulted(); }
  hipStream_t stream() const { return stream_; }
  const gpu::DeviceLimits& limits() const { return limits_; }

  const hip::Runtime& api;

 private:
  [[noreturn]] void fail(hipError_t result, const char* call, const std::string& what, Errc kind);
  // Enqueues a copy and waits for it.
  void copy(hipError_t enqueued, const char* call, const std::string& what);
  void transfer(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, const std::string& what);
  int ordinal_of_bus(const std::string& pci_bus_id) const;
  std::string pci_bus_id(int device) const;
  void fill_by_doubling(char* device, const void* pattern, size_t pattern_bytes, size_t count);

  const comm::Comm& comm_;
  int device_ = -1;
  int device_count_ = 0;
  std::string device_name_;
  std::string arch_;  // the full target id, "gfx90a:sramecc+:xnack-", as hiprtc's --offload-arch takes it
  gpu::DeviceLimits limits_;
  hipStream_t stream_ = nullptr;
  bool launch_blocking_ = false;  // IRIS_LAUNCH_BLOCKING=1: wait after every launch
  gpu::FaultState faults_;

  void* heap_ = nullptr;
  size_t heap_bytes_ = 0;
  std::map<int, void*> peers_;  // rank -> its heap opened through IPC
};

}  // namespace iris::runtime
