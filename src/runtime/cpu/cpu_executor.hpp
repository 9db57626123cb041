// The cpu backend's executor: runs a kernel's grid with GPU semantics on host threads.
//
//   - Blocks are taken from a shared counter by the launching thread and a pool of worker threads
//     (IRIS_CPU_THREADS in all), each running one block at a time, start to end.
//   - A block's threads run on fibers (Boost.Context: far cheaper a switch than ucontext, which saves the
//     signal mask with a system call; docs/decisions.md has the figures). One fiber runs the block's threads one after
//     another; only a thread that waits (__syncthreads, a spinning wait) keeps its fiber, and the next
//     thread starts on a new one. A kernel without barriers thus runs its threads straight through.
//   - __syncthreads() parks the fiber until every thread of the block that has not returned arrives
//     (threads that returned early do not hold the others up, as on NVIDIA and AMD GPUs).
//   - A warp collective (shuffle, vote, __syncwarp) parks the fiber until the lanes its mask names
//     arrive or return; cpu_warps.hpp computes the results as an NVIDIA GPU would.
//   - Kernels built for the weak memory model (IRIS_CPU_MEMORY_MODEL=weak) hold back their stores to
//     other ranks' heaps in a store buffer per device thread (cpu_store_buffer.hpp), published at
//     releases, barriers, random moments and, a little late, after the launch's last block.
//   - Ctrl-C (interrupt::request) stops a launch where its threads wait (spins, barriers, warp
//     collectives) and between blocks; a thread computing without waiting cannot be stopped.
//   - A fault inside a kernel (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, a trap, exit() or abort(), a
//     timed-out wait) ends the launch and is returned, never a crash: the worker jumps back to where it
//     took the block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "iris/impl/abi.h"
#include "runtime/backend.hpp"

namespace iris::runtime::cpu {

// What the cpu compiler exports per kernel: `__iris_entry_<i>(args, state)` runs one device thread.
using KernelEntry = void (*)(void** args, abi::CpuThreadState* state);

// Largest dynamic shared memory a launch may ask for (a per-thread buffer of this size is reserved).
constexpr size_t kMaxDynamicSharedBytes = 1 << 20;

// The first fault of a launch: what happened ("illegal address 0x10 (SIGSEGV)", or a trap's reason)
// and where (" in block (1,0,0) thread (5,0,0)"); `what` is empty when the launch did not fault.
// `interrupted`: no fault, Ctrl-C stopped the launch (interrupt::pending(); the flag stays set).
struct LaunchFault {
  std::string what;
  std::string where;
  bool interrupted = false;
  explicit operator bool() const { return !what.empty(); }
};

class Executor {
 public:
  // `threads`: how many OS threads run blocks (the launching thread is one of them). `memory_seed`
  // seeds the weak memory model's random choices.
  Executor(int threads, uint64_t memory_seed);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs every block; returns the first fault, if any. Throws Error(launch) for a configuration no GPU
  // would accept.
  LaunchFault run(KernelEntry entry, void** args, const LaunchConfig& config);

  // The function table cpu modules are bound to (__iris_cpu_bind).
  static const abi::CpuRuntime* runtime_table();

 private:
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

}  // namespace iris::runtime::cpu
