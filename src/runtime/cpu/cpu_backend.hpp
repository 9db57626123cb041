// The cpu backend: the "device" is this process's CPU. The heap is POSIX shared memory that every rank
// of the node maps, kernels are built by the host C++ compiler into shared objects and run by an
// executor with GPU semantics (threads, blocks, __syncthreads, shared memory, atomics).
//
// Two concerns, one file pair each, so they can be read apart:
//   cpu_memory.{hpp,cpp}     the shared-memory heap, copies, fills       (struct CpuMemory)
//   cpu_execution.{hpp,cpp}  modules, launches, events, synchronization  (struct CpuExecution)
//   cpu_graph.{hpp,cpp}      captures: recorded launches, run again in order (ctx:capture)
// Launches on this backend complete before launch() returns: the order is a stream's, and nothing
// needs to be waited for afterwards (docs/decisions.md).
#pragma once

#include <memory>

#include "runtime/backend.hpp"
#include "runtime/cpu/cpu_graph.hpp"

namespace iris::runtime {

struct CpuMemory;
struct CpuExecution;

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const comm::Comm& comm);
  ~CpuBackend() override;

  const char* name() const override { return "cpu"; }
  int device() const override { return 0; }
  std::string device_name() const override;
  CodeTarget code_target() const override;
  LaunchLimits launch_limits() const override;

  void* allocate_heap(size_t bytes) override;
  std::vector<uint8_t> export_heap() override;
  void* import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& handle, size_t bytes) override;
  void peers_opened() override;
  void release_heaps() override;
  MappedHostBuffer allocate_mapped_host(size_t bytes) override;
  void free_mapped_host(MappedHostBuffer& buffer) override;

  void copy_to_host(void* host, const void* device, size_t bytes) override;
  void copy_from_host(void* device, const void* host, size_t bytes) override;
  void copy_device(void* dst, const void* src, size_t bytes) override;
  void copy_device_async(void* dst, const void* src, size_t bytes) override;
  void fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) override;
  bool host_addressable() const override { return true; }

  void synchronize() override;
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code) override;
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

 private:
  friend class CpuGraph;

  std::unique_ptr<CpuMemory> memory_;
  std::unique_ptr<CpuExecution> execution_;
  std::vector<CpuRecordedLaunch> recording_;  // the capture in progress
};

}  // namespace iris::runtime
