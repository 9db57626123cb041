// The hip backend's kernels: modules (code objects through hipModuleLoadData), launches, events, and
// the raw-launch loop iris.bench's launch overhead is measured against.
#include <unordered_map>

#include "core/log.hpp"
#include "runtime/gpu/module_lookup.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

namespace {

class HipModule final : public Module {
 public:
  HipModule(HipBackend& backend, hipModule_t module) : backend_(backend), module_(module) {}

  ~HipModule() override {
    if (backend_.faulted()) return;
    try {
      // Unloading code that kernels still run is undefined: wait for them first.
      backend_.wait_stream("finishing kernels before unloading their module");
      (void)backend_.api.hipModuleUnload(module_);  // best effort at teardown
    } catch (const Error& e) {
      log::write(log::Level::warning, format("hip: unloading a module: %s", e.what()));
    }
  }

  void* function(const std::string& symbol) override {
    if (auto known = functions_.find(symbol); known != functions_.end()) return known->second;
    backend_.throw_if_faulted();
    backend_.bind();
    hipFunction_t function = nullptr;
    hipError_t result = backend_.api.hipModuleGetFunction(&function, module_, symbol.c_str());
    if (result == hipErrorNotFound) {
      gpu::throw_not_in_module("kernel", symbol, "hipModuleGetFunction", hip::error_text(&backend_.api, result));
    }
    backend_.check(result, "hipModuleGetFunction", format("looking up kernel '%s'", symbol.c_str()),
                   Errc::invalid_argument);
    functions_.emplace(symbol, function);
    return function;
  }

  void write_global(const std::string& symbol, const void* data, size_t bytes) override {
    backend_.throw_if_faulted();
    backend_.bind();
    hipDeviceptr_t address = nullptr;
    size_t size = 0;
    hipError_t result = backend_.api.hipModuleGetGlobal(&address, &size, module_, symbol.c_str());
    if (result == hipErrorNotFound) {
      gpu::throw_not_in_module("module variable", symbol, "hipModuleGetGlobal", hip::error_text(&backend_.api, result));
    }
    backend_.check(result, "hipModuleGetGlobal", format("looking up module variable '%s'", symbol.c_str()),
                   Errc::invalid_argument);
    gpu::check_global_size(symbol, size, bytes);
    backend_.copy_from_host(address, data, bytes);
  }

  // The kernel's limits, asked of the runtime once per kernel.
  const gpu::KernelLimits& limits(hipFunction_t function) {
    if (auto known = kernels_.find(function); known != kernels_.end()) return known->second;
    int max_threads = 0, static_shared = 0;
    backend_.check(backend_.api.hipFuncGetAttribute(&max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
                   "hipFuncGetAttribute", "reading a kernel's thread limit", Errc::launch);
    backend_.check(backend_.api.hipFuncGetAttribute(&static_shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
                   "hipFuncGetAttribute", "reading a kernel's static shared memory", Errc::launch);
    gpu::KernelLimits limits;
    limits.max_threads_per_block = static_cast<unsigned>(max_threads);
    limits.static_shared_bytes = static_cast<size_t>(static_shared);
    return kernels_.emplace(function, limits).first->second;
  }

 private:
  HipBackend& backend_;
  hipModule_t module_;
  std::unordered_map<std::string, hipFunction_t> functions_;
  std::unordered_map<hipFunction_t, gpu::KernelLimits> kernels_;
};

class HipEvent final : public Event {
 public:
  explicit HipEvent(HipBackend& backend) : backend_(backend) {
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.check(backend_.api.hipEventCreate(&event_), "hipEventCreate", "creating a timing event");
  }
  ~HipEvent() override {
    if (!backend_.faulted()) (void)backend_.api.hipEventDestroy(event_);
  }

  void record() override {
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.check(backend_.api.hipEventRecord(event_, backend_.stream()), "hipEventRecord", "recording a timing event");
    recorded_ = true;
  }

  double elapsed_ms_since(Event& start_event) override {
    auto& start = static_cast<HipEvent&>(start_event);
    if (!start.recorded_ || !recorded_) {
      throw Error(Errc::invalid_argument, "elapsed time between events that were not both recorded: record() them first");
    }
    backend_.wait_event(event_, "waiting for a timing event");
    float ms = 0;
    backend_.check(backend_.api.hipEventElapsedTime(&ms, start.event_, event_), "hipEventElapsedTime",
                   "measuring the time between two events", Errc::invalid_argument);
    return ms;
  }

 private:
  HipBackend& backend_;
  hipEvent_t event_ = nullptr;
  bool recorded_ = false;
};

hipError_t launch_once(const hip::Runtime& api, hipFunction_t function, const LaunchConfig& config,
                       hipStream_t stream, void** args) {
  return api.hipModuleLaunchKernel(function, config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                   config.block.y, config.block.z, static_cast<unsigned>(config.shared_bytes), stream,
                                   args, nullptr);
}

}  // namespace

std::unique_ptr<Module> HipBackend::load_module(const std::vector<uint8_t>& code) {
  throw_if_faulted();
  if (code.empty()) throw Error(Errc::invalid_argument, "loading an empty module: the compiler produced no code");
  bind();
  hipModule_t module = nullptr;
  check(api.hipModuleLoadData(&module, code.data()), "hipModuleLoadData",
        format("loading a code object (%s) on GPU %d (%s, %s)", human_bytes(code.size()).c_str(), device_,
               device_name_.c_str(), arch_.c_str()),
        Errc::compile);
  return std::make_unique<HipModule>(*this, module);
}

void HipBackend::launch(Module& module, void* function, const LaunchConfig& config, void** args,
                        const std::string& kernel_label) {
  throw_if_faulted();
  bind();
  auto kernel = static_cast<hipFunction_t>(function);
  gpu::check_launch(config, limits_, static_cast<HipModule&>(module).limits(kernel), kernel_label, device_name_);
  hipError_t result = launch_once(api, kernel, config, stream_, args);
  if (result != hipSuccess) {
    // A fault of an earlier kernel can surface here: that is a device fault naming the kernels in flight.
    if (hip::is_device_fault(result)) fail(result, "hipModuleLaunchKernel", "launch of " + kernel_label, Errc::launch);
    throw Error(Errc::launch, format("launch of %s (grid %s, block %s, %s of dynamic shared memory): "
                                     "hipModuleLaunchKernel returned %s",
                                     kernel_label.c_str(), gpu::describe_dims(config.grid).c_str(),
                                     gpu::describe_dims(config.block).c_str(), human_bytes(config.shared_bytes).c_str(),
                                     hip::error_text(&api, result).c_str()));
  }
  faults_.launched(kernel_label);
  if (launch_blocking_) wait_stream("waiting for the kernel just launched (IRIS_LAUNCH_BLOCKING=1)");
}

std::unique_ptr<Event> HipBackend::create_event() { return std::make_unique<HipEvent>(*this); }

double HipBackend::time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args,
                                     int iterations) {
  if (iterations < 1) throw Error(Errc::invalid_argument, format("time_raw_launches of %d iterations", iterations));
  throw_if_faulted();
  bind();
  auto kernel = static_cast<hipFunction_t>(function);
  const std::string label = format("the kernel timed by time_raw_launches (%d launches)", iterations);
  gpu::check_launch(config, limits_, static_cast<HipModule&>(module).limits(kernel), label, device_name_);
  HipEvent start(*this), stop(*this);
  start.record();
  faults_.launched(label);
  for (int i = 0; i < iterations; ++i) {
    hipError_t result = launch_once(api, kernel, config, stream_, args);
    if (result != hipSuccess) check(result, "hipModuleLaunchKernel", label, Errc::launch);
  }
  stop.record();
  const double ms = stop.elapsed_ms_since(start);
  wait_stream("finishing the timed launches");
  return ms / 1000.0;
}

}  // namespace iris::runtime
