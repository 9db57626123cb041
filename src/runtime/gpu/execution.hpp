// The GPU backends' kernels, written once over the vendor adaptor (gpu_backend.hpp): a loaded module
// (kernels and module variables by name, each kernel's limits asked once), timing events, launches and
// the raw-launch loop iris.bench's launch overhead is measured against. Loading a module is the
// vendor's (cuda_modules.cpp: cubin, fatbin or PTX with the JIT log; hip_modules.cpp: code objects).
//
// LoadedModule and TimingEvent are used by the vendor's load_module(); the GpuBackend bodies below are
// compiled only where a vendor instantiates GpuBackend (cuda_backend.cpp, hip_backend.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/log.hpp"
#include "runtime/gpu/gpu_backend.hpp"

namespace iris::runtime::gpu {

template <class Api>
class LoadedModule final : public Module {
 public:
  using Function = typename Api::Function;
  using Returned = typename Api::Returned;

  // What a launch of one kernel is checked against, asked of the driver once per kernel.
  struct KernelInfo {
    KernelLimits limits;
    size_t dynamic_shared_allowed = 0;  // what it may use without opting in further (Api::dynamic_shared_opt_in)
  };

  LoadedModule(GpuBackend<Api>& backend, typename Api::Module module) : backend_(backend), module_(module) {}

  ~LoadedModule() override {
    if (backend_.faulted()) return;
    try {
      // Unloading code that kernels still run is undefined: wait for them first.
      backend_.wait_stream("finishing kernels before unloading their module");
      (void)backend_.calls.module_unload(module_);  // best effort at teardown
    } catch (const Error& e) {
      log::write(log::Level::warning, format("%s: unloading a module: %s", Api::name, e.what()));
    }
  }

  void* function(const std::string& symbol) override {
    if (auto known = functions_.find(symbol); known != functions_.end()) return known->second;
    backend_.throw_if_faulted();
    backend_.bind();
    Function function = nullptr;
    const Returned found = backend_.calls.module_get_function(&function, module_, symbol.c_str());
    if (found.status == Api::not_found) throw_not_in_module("kernel", symbol, found);
    backend_.check(found, format("looking up kernel '%s'", symbol.c_str()), Errc::invalid_argument);
    functions_.emplace(symbol, function);
    return function;
  }

  void write_global(const std::string& symbol, const void* data, size_t bytes) override {
    backend_.throw_if_faulted();
    backend_.bind();
    void* address = nullptr;
    size_t size = 0;
    const Returned found = backend_.calls.module_get_global(&address, &size, module_, symbol.c_str());
    if (found.status == Api::not_found) throw_not_in_module("module variable", symbol, found);
    backend_.check(found, format("looking up module variable '%s'", symbol.c_str()), Errc::invalid_argument);
    // Written whole: a size that differs means the host and the kernel disagree on the variable.
    if (size != bytes) {
      throw Error(Errc::invalid_argument,
                  format("module variable '%s' is %zu bytes; %zu bytes were given", symbol.c_str(), size, bytes));
    }
    backend_.write_module_variable(address, data, bytes);
  }

  KernelInfo& info(Function function) {
    if (auto known = kernels_.find(function); known != kernels_.end()) return known->second;
    int max_threads = 0, static_shared = 0, dynamic_shared = 0;
    const auto ask = [&](int* value, typename Api::FunctionAttribute attribute, const char* what) {
      backend_.check(backend_.calls.function_attribute(value, attribute, function),
                     format("reading a kernel's %s", what), Errc::launch);
    };
    ask(&max_threads, Api::kernel_max_threads, "thread limit");
    ask(&static_shared, Api::kernel_static_shared, "static shared memory");
    if constexpr (Api::dynamic_shared_opt_in) {
      ask(&dynamic_shared, Api::kernel_dynamic_shared_allowed, "dynamic shared memory limit");
    }
    KernelInfo info;
    info.limits.max_threads_per_block = static_cast<unsigned>(max_threads);
    info.limits.static_shared_bytes = static_cast<size_t>(static_shared);
    info.dynamic_shared_allowed = static_cast<size_t>(dynamic_shared);
    return kernels_.emplace(function, info).first->second;
  }

 private:
  // "kernel 'scale' is not in this module (cuModuleGetFunction returned CUDA_ERROR_NOT_FOUND (...))"
  [[noreturn]] void throw_not_in_module(const char* kind, const std::string& symbol, const Returned& found) const {
    throw Error(Errc::invalid_argument, format("%s '%s' is not in this module (%s returned %s)", kind, symbol.c_str(),
                                               found.call, backend_.calls.error_text(found.status).c_str()));
  }

  GpuBackend<Api>& backend_;
  typename Api::Module module_;
  std::unordered_map<std::string, Function> functions_;
  std::unordered_map<Function, KernelInfo> kernels_;
};

template <class Api>
class TimingEvent final : public Event {
 public:
  explicit TimingEvent(GpuBackend<Api>& backend) : backend_(backend) {
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.check(backend_.calls.event_create(&event_), "creating a timing event");
  }
  ~TimingEvent() override {
    if (!backend_.faulted()) (void)backend_.calls.event_destroy(event_);
  }

  void record() override {
    backend_.refuse_while_capturing("recording a timing event");  // it would be part of the graph
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.join_second();  // a point after everything enqueued, on either stream
    backend_.check(backend_.calls.event_record(event_, backend_.stream()), "recording a timing event");
    recorded_ = true;
  }

  double elapsed_ms_since(Event& start_event) override {
    auto& start = static_cast<TimingEvent&>(start_event);
    if (!start.recorded_ || !recorded_) {
      throw Error(Errc::invalid_argument, "elapsed time between events that were not both recorded: record() them first");
    }
    backend_.wait_event(event_, "waiting for a timing event");
    float ms = 0;
    backend_.check(backend_.calls.event_elapsed_ms(&ms, start.event_, event_), "measuring the time between two events",
                   Errc::invalid_argument);
    return ms;
  }

 private:
  GpuBackend<Api>& backend_;
  typename Api::Event event_ = nullptr;
  bool recorded_ = false;
};

// --- launches ---------------------------------------------------------------------------------------------

template <class Api>
typename Api::Function GpuBackend<Api>::prepare_launch(Module& module, void* function, const LaunchConfig& config,
                                                       const std::string& label) {
  const auto kernel = static_cast<typename Api::Function>(function);
  auto& info = static_cast<LoadedModule<Api>&>(module).info(kernel);
  check_launch(config, limits_, info.limits, label, device_name_);
  if constexpr (Api::dynamic_shared_opt_in) {
    if (config.shared_bytes > info.dynamic_shared_allowed) {
      check(calls.set_max_dynamic_shared(kernel, static_cast<int>(config.shared_bytes)),
            format("launch of %s: allowing %s of dynamic shared memory", label.c_str(),
                   human_bytes(config.shared_bytes).c_str()),
            Errc::launch);
      info.dynamic_shared_allowed = config.shared_bytes;
    }
  }
  return kernel;
}

template <class Api>
void GpuBackend<Api>::launch(Module& module, void* function, const LaunchConfig& config, void** args,
                             const std::string& kernel_label) {
  enqueue(module, function, config, args, kernel_label);
  faults_.launched(kernel_label);
}

template <class Api>
void GpuBackend<Api>::enqueue(Module& module, void* function, const LaunchConfig& config, void** args,
                              const std::string& kernel_label) {
  throw_if_faulted();
  bind();
  const auto kernel = prepare_launch(module, function, config, kernel_label);
  const Returned launched = calls.launch_kernel(kernel, config, current_stream(), args);
  if (launched.status != Api::success) {
    // A fault of an earlier kernel can surface here: that is a device fault naming the kernels in flight.
    if (Api::is_device_fault(launched.status)) {
      fail(launched.status, launched.call, "launch of " + kernel_label, Errc::launch);
    }
    throw Error(Errc::launch, format("launch of %s (grid %s, block %s, %s of dynamic shared memory): %s returned %s",
                                     kernel_label.c_str(), describe_dims(config.grid).c_str(),
                                     describe_dims(config.block).c_str(), human_bytes(config.shared_bytes).c_str(),
                                     launched.call, calls.error_text(launched.status).c_str()));
  }
}

template <class Api>
std::unique_ptr<Event> GpuBackend<Api>::create_event() {
  return std::make_unique<TimingEvent<Api>>(*this);
}

template <class Api>
Backend::RawLaunchTimes GpuBackend<Api>::time_raw_launches(Module& module, void* function, const LaunchConfig& config,
                                                           void** args, int iterations) {
  if (iterations < 1) throw Error(Errc::invalid_argument, format("time_raw_launches of %d iterations", iterations));
  refuse_while_capturing("timing raw launches");
  throw_if_faulted();
  bind();
  const std::string label = format("the kernel timed by time_raw_launches (%d launches)", iterations);
  const auto kernel = prepare_launch(module, function, config, label);
  join_second();
  TimingEvent<Api> start(*this), stop(*this);
  start.record();
  faults_.launched(label);
  const auto issued_from = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    check(calls.launch_kernel(kernel, config, stream_, args), label, Errc::launch);
  }
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - issued_from).count();
  stop.record();
  const double ms = stop.elapsed_ms_since(start);
  wait_stream("finishing the timed launches");
  return {ms / 1000.0, host};
}

}  // namespace iris::runtime::gpu
