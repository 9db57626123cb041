// The kernels of one rank: compiles programs (through the disk cache, also for IRIS_CROSS_COMPILE's
// targets), loads them on the backend, writes each module's state, launches kernels, runs iris's own
// device barrier, and captures launches into graphs and replays them (ctx:capture).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compiler.hpp"
#include "iris/impl/abi.h"
#include "programs/program.hpp"
#include "runtime/backend.hpp"

namespace iris::compiler {
class KernelCache;
}

namespace iris::programs {

class DeviceTimeline;

// What this rank's kernels run against.
struct DeviceContext {
  runtime::Backend* backend = nullptr;
  int rank = 0;
  int world_size = 1;
  const uint64_t* heap_bases = nullptr;  // device pointer to world_size entries; null without a heap
  void* heap_base = nullptr;             // this rank's heap (device pointer); null without a heap
  runtime::MappedHostBuffer mailbox;     // the job's abi::DeviceMailbox, watched by the backend
  abi::ProxyRing* proxy = nullptr;       // the host proxy's ring (device address); null on one node
};

// A target IRIS_CROSS_COMPILE names. An optional one ("hip:gfx90a?") is left out where its compiler is
// not installed: test environments carried to machines without hiprtc (the NVIDIA GPU machines).
struct CrossTarget {
  runtime::CodeTarget target;
  bool optional = false;
};

struct RegistryOptions {
  std::string cache_dir;
  std::vector<CrossTarget> cross_targets;  // compiled too, never launched
  int64_t wait_timeout_ns = 10'000'000'000;
  bool launch_blocking = false;
  bool early_start = true;  // kernels declared IRIS_EARLY_START start early where the backend can
  // From IRIS_CACHE_DIR, IRIS_CROSS_COMPILE, IRIS_WAIT_TIMEOUT, IRIS_LAUNCH_BLOCKING, IRIS_EARLY_START; throws
  // Error(environment) for a value it cannot read.
  static RegistryOptions from_environment();
};

// The define a program is compiled with while a trace is on (device/iris/impl/trace.hpp).
constexpr const char* kTraceDefine = "IRIS_TRACE_DEVICE";
// Whether `source` is compiled with it.
bool compiled_traced(const ProgramSource& source);

// "cuda:sm_90,hip:gfx90a?,cpu" -> targets; throws Error(environment) naming a bad entry.
std::vector<CrossTarget> parse_cross_targets(const std::string& text);

class Registry {
 public:
  Registry(DeviceContext device, RegistryOptions options);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Compiles (or finds, when the same source with the same options was compiled before) a program.
  Program& compile(ProgramSource source);
  // One of iris's own kernel files, by its name under kernels/ without the extension ("device_barrier",
  // "ccl/all_reduce"), compiled like any snippet (same compilers, same disk cache). Throws
  // Error(invalid_argument) for a name the binary does not embed.
  Program& builtin(const std::string& name);

  void launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args);
  // `given` with early_start set where the kernel is declared IRIS_EARLY_START (it waits on the device
  // for the kernel ahead of it), IRIS_EARLY_START is not 0 and the backend can (Backend::early_start).
  runtime::LaunchConfig launch_config(const Kernel& kernel, const runtime::LaunchConfig& given);
  // Waits for this rank's device work (a fault's message names a failed wait: the backend watches the
  // mailbox).
  void synchronize();
  // ctx:device_barrier(): every rank's device waits for every other's (asynchronous like a launch).
  // Its epoch is counted on the device, so a captured one is right at every replay.
  void device_barrier();

  // Graphs (ctx:capture, docs/graphs.md). From begin_capture() until end_capture() or
  // abort_capture(), this rank's launches are recorded instead of run (a span each while a trace is
  // on, category "capture"); compiling still works. The graph belongs to the registry until
  // free_graph(); `label` names it in messages and the trace ("the graph captured at x.lua:12").
  void begin_capture();
  bool capturing() const { return device_.backend->capturing(); }
  runtime::Graph& end_capture(const std::string& label);
  void abort_capture();
  // Runs `graph` `times` times, asynchronously like a launch; while a trace is on, one span on the
  // host and one on the device for the whole call.
  void replay(runtime::Graph& graph, int64_t times);
  // Throws Error(internal) for a graph this registry does not hold.
  void free_graph(runtime::Graph& graph);

  // Tracing (docs/tracing.md). While a trace is on, programs compile with IRIS_TRACE_DEVICE (their
  // trace_begin calls record), a kernel compiled before it started is launched as its traced twin
  // (the same source compiled again with the define, once), and every launch is timed on the device.
  // The device trace buffer goes into every module's state; set it before the first traced compile.
  void set_trace_buffer(abi::TraceBuffer* device_buffer) { trace_buffer_ = device_buffer; }
  DeviceTimeline& timeline();

  runtime::Backend& backend() { return *device_.backend; }
  const DeviceContext& device() const { return device_; }
  const RegistryOptions& options() const { return options_; }

  // Compiles for the backend's target and every cross target; loads the former. Used by Program.
  std::unique_ptr<runtime::Module> build(const ProgramSource& source, const std::vector<std::string>& names,
                                         std::map<std::string, std::string>* symbols);

 private:
  compiler::CompiledCode compile_for(const runtime::CodeTarget& target, const std::string& unit,
                                     const std::vector<std::string>& options, const std::vector<std::string>& names,
                                     const std::string& what, bool cross);
  compiler::Compiler& compiler(const std::string& kind);
  // Whether the compiler of `kind` is installed here (asked once; says so when it is not).
  bool compiler_available(const std::string& kind);
  compiler::KernelCache& cache();
  void traced_launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args);
  void captured_launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args);
  void traced_replay(runtime::Graph& graph, const std::string& label, int64_t times);
  const std::string& graph_label(const runtime::Graph& graph) const;
  const Kernel& traced_variant(const Kernel& kernel);

  DeviceContext device_;
  RegistryOptions options_;
  std::unique_ptr<compiler::KernelCache> cache_;
  std::string include_dir_;
  std::map<std::string, std::unique_ptr<compiler::Compiler>> compilers_;
  std::map<std::string, bool> compiler_available_;
  std::map<std::string, std::unique_ptr<Program>> programs_;  // by digest of source, options and origin
  Kernel* barrier_kernel_ = nullptr;
  struct HeldGraph {
    std::unique_ptr<runtime::Graph> graph;
    std::string label;
  };
  std::map<const runtime::Graph*, HeldGraph> graphs_;  // freed before the programs whose kernels they run
  abi::TraceBuffer* trace_buffer_ = nullptr;
  std::unique_ptr<DeviceTimeline> timeline_;
  std::map<const Kernel*, const Kernel*> traced_variants_;
  uint64_t launch_flows_ = 0;
};

}  // namespace iris::programs
