// The cpu backend's execution: kernels built by the host C++ compiler into shared objects, run by the
// executor (cpu_executor.hpp) with GPU semantics.
//
// A launch runs to completion inside launch(); a fault it hit is kept and thrown by the next
// synchronize() (and by every later launch and synchronize: a faulted device stays faulted, as on a
// GPU), so scripts see faults where a GPU would report them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::runtime {

namespace cpu {
class Executor;
}

struct CpuExecution {
  explicit CpuExecution(const comm::Comm& comm);
  ~CpuExecution();

  void synchronize();
  std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code);
  // `mailbox`: the watched abi::DeviceMailbox (Backend::watch_mailbox), possibly empty: a kernel that
  // trapped because a wait gave up is reported with the wait's report.
  void launch(Module& module, void* function, const LaunchConfig& config, void** args, const std::string& kernel_label,
              const MappedHostBuffer& mailbox);
  std::unique_ptr<Event> create_event();
  double time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args, int iterations);

  const comm::Comm& comm;

 private:
  cpu::Executor& executor();  // started at the first launch: a job without kernels starts no threads
  [[noreturn]] void stopped_by_interrupt(const std::string& what);
  std::unique_ptr<cpu::Executor> executor_;
  std::string fault_;  // the pending device fault, "" when none
};

// IRIS_CPU_THREADS, else the cores divided among the node's ranks (at least 1).
int cpu_threads_per_rank(const comm::Comm& comm);
// IRIS_CPU_THREADS and IRIS_CPU_MEMORY_SEED as their readers take them (`fallback` when unset).
int cpu_threads_from_environment(int fallback);
uint64_t cpu_memory_seed_from_environment(uint64_t fallback);
// IRIS_CPU_MEMORY_SEED (else a random one) with the rank mixed in: the weak memory model's choices.
uint64_t cpu_memory_seed(const comm::Comm& comm);

}  // namespace iris::runtime
