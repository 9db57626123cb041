// The cuda backend's class, shared by its three source files:
//   cuda_backend.cpp  device choice, context, stream, waiting, faults
//   cuda_memory.cpp   symmetric heap (IPC), mapped host memory, copies, fills
//   cuda_kernels.cpp  modules, launches, events, the raw-launch reference
//
// One primary context per process and one non-blocking stream. Every memory operation is enqueued on
// that stream (so it runs after the kernels launched before it) and waited for before it returns; only
// launch() returns early. Modules and events refer to the backend: the backend outlives them (the
// Runtime declares it first, so destroys it last).
#pragma once

#include <cuda.h>

#include <map>
#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/cuda/cuda_driver.hpp"
#include "runtime/gpu/fault_report.hpp"
#include "runtime/gpu/launch_limits.hpp"

namespace iris::runtime {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const comm::Comm& comm);
  ~CudaBackend() override;

  const char* name() const override { return "cuda"; }
  int device() const override { return device_; }
  std::string device_name() const override { return device_name_; }
  CodeTarget code_target() const override;

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
  // Makes the context current on the calling thread (a no-op when it already is).
  void bind();
  // Throws for a failed driver call: Error(device_fault) for sticky faults (naming the kernels in
  // flight and the mailbox report), else Error(kind) "<what>: <call> returned <error>".
  void check(CUresult result, const char* call, const std::string& what, Errc kind = Errc::environment);
  // Waits for everything enqueued on the stream (polling, so Ctrl-C works).
  void wait_stream(const char* what);
  // Waits until `event` has happened.
  void wait_event(CUevent event, const char* what);
  void throw_if_faulted() const { faults_.throw_if_faulted(); }
  bool faulted() const { return faults_.faulted(); }
  CUstream stream() const { return stream_; }
  const gpu::DeviceLimits& limits() const { return limits_; }
  void note_launch(const std::string& label) { faults_.launched(label); }

  const cuda::Driver& cu;

 private:
  [[noreturn]] void fail(CUresult result, const char* call, const std::string& what, Errc kind);
  // Checks that a copy (or fill) was enqueued, and waits for it.
  void copy(CUresult enqueued, const char* call, const std::string& what);
  // The local ordinal of the GPU on PCI bus `pci_bus_id`, or -1 when this process does not see it.
  int ordinal_of_bus(const std::string& pci_bus_id) const;
  std::string pci_bus_id(CUdevice device) const;
  void fill_by_doubling(CUdeviceptr device, const void* pattern, size_t pattern_bytes, size_t count);

  const comm::Comm& comm_;
  int device_ = -1;
  int device_count_ = 0;
  CUdevice cu_device_ = 0;
  std::string device_name_;
  int compute_major_ = 0, compute_minor_ = 0;
  gpu::DeviceLimits limits_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  bool launch_blocking_ = false;  // IRIS_LAUNCH_BLOCKING=1: wait after every launch
  gpu::FaultState faults_;

  CUdeviceptr heap_ = 0;
  size_t heap_bytes_ = 0;
  std::map<int, CUdeviceptr> peers_;  // rank -> its heap opened through IPC
  bool warned_atomics_ = false;
};

}  // namespace iris::runtime
