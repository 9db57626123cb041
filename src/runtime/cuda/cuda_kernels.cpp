// The cuda backend's kernels: modules (cubin, fatbin or PTX through cuModuleLoadDataEx), launches,
// events, and the raw-launch loop iris.bench's launch overhead is measured against.
#include <cstring>
#include <unordered_map>

#include "core/log.hpp"
#include "runtime/gpu/module_lookup.hpp"
#include "runtime/cuda/cuda_backend_impl.hpp"

namespace iris::runtime {

namespace {

struct KernelInfo {
  gpu::KernelLimits limits;
  size_t dynamic_shared_allowed = 0;  // what the kernel may use without opting in further
};

class CudaModule final : public Module {
 public:
  CudaModule(CudaBackend& backend, CUmodule module) : backend_(backend), module_(module) {}

  ~CudaModule() override {
    if (backend_.faulted()) return;
    try {
      // Unloading code that kernels still run is undefined: wait for them first.
      backend_.wait_stream("finishing kernels before unloading their module");
      backend_.cu.cuModuleUnload(module_);
    } catch (const Error& e) {
      log::write(log::Level::warning, format("cuda: unloading a module: %s", e.what()));
    }
  }

  void* function(const std::string& symbol) override {
    if (auto known = functions_.find(symbol); known != functions_.end()) return known->second;
    backend_.throw_if_faulted();
    backend_.bind();
    CUfunction function = nullptr;
    CUresult result = backend_.cu.cuModuleGetFunction(&function, module_, symbol.c_str());
    if (result == CUDA_ERROR_NOT_FOUND) {
      gpu::throw_not_in_module("kernel", symbol, "cuModuleGetFunction", cuda::error_text(&backend_.cu, result));
    }
    backend_.check(result, "cuModuleGetFunction", format("looking up kernel '%s'", symbol.c_str()),
                   Errc::invalid_argument);
    functions_.emplace(symbol, function);
    return function;
  }

  void write_global(const std::string& symbol, const void* data, size_t bytes) override {
    backend_.throw_if_faulted();
    backend_.bind();
    CUdeviceptr address = 0;
    size_t size = 0;
    CUresult result = backend_.cu.cuModuleGetGlobal(&address, &size, module_, symbol.c_str());
    if (result == CUDA_ERROR_NOT_FOUND) {
      gpu::throw_not_in_module("module variable", symbol, "cuModuleGetGlobal", cuda::error_text(&backend_.cu, result));
    }
    backend_.check(result, "cuModuleGetGlobal", format("looking up module variable '%s'", symbol.c_str()),
                   Errc::invalid_argument);
    gpu::check_global_size(symbol, size, bytes);
    backend_.copy_from_host(reinterpret_cast<void*>(address), data, bytes);
  }

  // The kernel's limits, asked of the driver once per kernel.
  KernelInfo& info(CUfunction function) {
    if (auto known = kernels_.find(function); known != kernels_.end()) return known->second;
    KernelInfo info;
    int max_threads = 0, static_shared = 0, dynamic_shared = 0;
    const auto ask = [&](int* value, CUfunction_attribute attribute, const char* what) {
      backend_.check(backend_.cu.cuFuncGetAttribute(value, attribute, function), "cuFuncGetAttribute",
                     format("reading a kernel's %s", what), Errc::launch);
    };
    ask(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "thread limit");
    ask(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory");
    ask(&dynamic_shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic shared memory limit");
    info.limits.max_threads_per_block = static_cast<unsigned>(max_threads);
    info.limits.static_shared_bytes = static_cast<size_t>(static_shared);
    info.dynamic_shared_allowed = static_cast<size_t>(dynamic_shared);
    return kernels_.emplace(function, info).first->second;
  }

 private:
  CudaBackend& backend_;
  CUmodule module_;
  std::unordered_map<std::string, CUfunction> functions_;
  std::unordered_map<CUfunction, KernelInfo> kernels_;
};

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(CudaBackend& backend) : backend_(backend) {
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.check(backend_.cu.cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate", "creating a timing event");
  }
  ~CudaEvent() override {
    if (!backend_.faulted()) backend_.cu.cuEventDestroy(event_);
  }

  void record() override {
    backend_.throw_if_faulted();
    backend_.bind();
    backend_.check(backend_.cu.cuEventRecord(event_, backend_.stream()), "cuEventRecord", "recording a timing event");
    recorded_ = true;
  }

  double elapsed_ms_since(Event& start_event) override {
    auto& start = static_cast<CudaEvent&>(start_event);
    if (!start.recorded_ || !recorded_) {
      throw Error(Errc::invalid_argument, "elapsed time between events that were not both recorded: record() them first");
    }
    backend_.wait_event(event_, "waiting for a timing event");
    float ms = 0;
    backend_.check(backend_.cu.cuEventElapsedTime(&ms, start.event_, event_), "cuEventElapsedTime",
                   "measuring the time between two events", Errc::invalid_argument);
    return ms;
  }

 private:
  CudaBackend& backend_;
  CUevent event_ = nullptr;
  bool recorded_ = false;
};

// Checks the launch against the limits and opts the kernel in to large dynamic shared memory.
void prepare_launch(CudaBackend& backend, CudaModule& module, CUfunction function, const LaunchConfig& config,
                    const std::string& label) {
  KernelInfo& kernel = module.info(function);
  gpu::check_launch(config, backend.limits(), kernel.limits, label, backend.device_name());
  if (config.shared_bytes > kernel.dynamic_shared_allowed) {
    // Above 48 KiB, dynamic shared memory is an opt-in per kernel.
    backend.check(backend.cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                static_cast<int>(config.shared_bytes)),
                  "cuFuncSetAttribute",
                  format("launch of %s: allowing %s of dynamic shared memory", label.c_str(),
                         human_bytes(config.shared_bytes).c_str()),
                  Errc::launch);
    kernel.dynamic_shared_allowed = config.shared_bytes;
  }
}

CUresult launch_once(const cuda::Driver& cu, CUfunction function, const LaunchConfig& config, CUstream stream,
                     void** args) {
  return cu.cuLaunchKernel(function, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
                           config.block.z, static_cast<unsigned>(config.shared_bytes), stream, args, nullptr);
}

bool is_binary_image(const std::vector<uint8_t>& code) {
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
  return code.size() >= 4 && (std::memcmp(code.data(), elf, 4) == 0 || std::memcmp(code.data(), fatbin, 4) == 0);
}

}  // namespace

std::unique_ptr<Module> CudaBackend::load_module(const std::vector<uint8_t>& code) {
  throw_if_faulted();
  if (code.empty()) throw Error(Errc::invalid_argument, "loading an empty module: the compiler produced no code");
  bind();
  // cubin and fatbin load as they are; PTX is text the driver compiles, and must end with a NUL.
  const bool binary = is_binary_image(code);
  std::vector<uint8_t> text;
  const void* image = code.data();
  if (!binary && code.back() != 0) {
    text.reserve(code.size() + 1);
    text.assign(code.begin(), code.end());
    text.push_back(0);
    image = text.data();
  }
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log - 1))};
  CUmodule module = nullptr;
  CUresult result = cu.cuModuleLoadDataEx(&module, image, 2, options, values);
  if (result != CUDA_SUCCESS) {
    const std::string what = format("loading a module (%s, %s) on GPU %d (%s, sm_%d%d)", binary ? "cubin" : "PTX",
                                    human_bytes(code.size()).c_str(), device_, device_name_.c_str(), compute_major_,
                                    compute_minor_);
    if (cuda::is_device_fault(result)) fail(result, "cuModuleLoadDataEx", what, Errc::compile);
    throw Error(Errc::compile, format("%s: cuModuleLoadDataEx returned %s%s%s", what.c_str(),
                                      cuda::error_text(&cu, result).c_str(), log[0] ? "; the driver's log:\n" : "", log));
  }
  return std::make_unique<CudaModule>(*this, module);
}

void CudaBackend::launch(Module& module, void* function, const LaunchConfig& config, void** args,
                         const std::string& kernel_label) {
  throw_if_faulted();
  bind();
  auto kernel = static_cast<CUfunction>(function);
  prepare_launch(*this, static_cast<CudaModule&>(module), kernel, config, kernel_label);
  CUresult result = launch_once(cu, kernel, config, stream_, args);
  if (result != CUDA_SUCCESS) {
    // A fault of an earlier kernel can surface here: that is a device fault naming the kernels in flight.
    if (cuda::is_device_fault(result)) fail(result, "cuLaunchKernel", "launch of " + kernel_label, Errc::launch);
    throw Error(Errc::launch, format("launch of %s (grid %s, block %s, %s of dynamic shared memory): cuLaunchKernel "
                                     "returned %s",
                                     kernel_label.c_str(), gpu::describe_dims(config.grid).c_str(),
                                     gpu::describe_dims(config.block).c_str(), human_bytes(config.shared_bytes).c_str(),
                                     cuda::error_text(&cu, result).c_str()));
  }
  faults_.launched(kernel_label);
  if (launch_blocking_) wait_stream("waiting for the kernel just launched (IRIS_LAUNCH_BLOCKING=1)");
}

std::unique_ptr<Event> CudaBackend::create_event() { return std::make_unique<CudaEvent>(*this); }

double CudaBackend::time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args,
                                      int iterations) {
  if (iterations < 1) throw Error(Errc::invalid_argument, format("time_raw_launches of %d iterations", iterations));
  throw_if_faulted();
  bind();
  auto kernel = static_cast<CUfunction>(function);
  const std::string label = format("the kernel timed by time_raw_launches (%d launches)", iterations);
  prepare_launch(*this, static_cast<CudaModule&>(module), kernel, config, label);
  CudaEvent start(*this), stop(*this);
  start.record();
  faults_.launched(label);
  for (int i = 0; i < iterations; ++i) {
    CUresult result = launch_once(cu, kernel, config, stream_, args);
    if (result != CUDA_SUCCESS) check(result, "cuLaunchKernel", label, Errc::launch);
  }
  stop.record();
  const double ms = stop.elapsed_ms_since(start);
  wait_stream("finishing the timed launches");
  return ms / 1000.0;
}

}  // namespace iris::runtime
