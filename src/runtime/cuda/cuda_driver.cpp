#include "runtime/cuda/cuda_driver.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/dynamic_library.hpp"

namespace iris::runtime::cuda {

std::string version_text(int version) { return format("%d.%d", version / 1000, version % 1000 / 10); }

Driver load_driver(const char* library) {
  DynamicLibrary lib = DynamicLibrary::open(
      {library}, "the NVIDIA driver library",
      "is an NVIDIA driver installed? Without one, run on another backend (IRIS_BACKEND=cpu)");
  Driver driver;
  using GetVersion = decltype(&::cuDriverGetVersion);
  auto get_version = reinterpret_cast<GetVersion>(lib.symbol("cuDriverGetVersion"));
  if (get_version) get_version(&driver.version);

#define IRIS_RESOLVE_DRIVER_FUNCTION(function)                                                               \
  driver.function = reinterpret_cast<decltype(driver.function)>(lib.symbol(IRIS_SYMBOL_NAME(function)));  \
  if (!driver.function) {                                                                                  \
    throw Error(Errc::environment,                                                                         \
                format("%s (driver for CUDA %s) has no %s, which iris-lua (built with the CUDA %s headers) " \
                       "calls: update the NVIDIA driver",                                                  \
                       library, driver.version ? version_text(driver.version).c_str() : "unknown",         \
                       IRIS_SYMBOL_NAME(function), version_text(CUDA_VERSION).c_str()));                   \
  }
  IRIS_CUDA_DRIVER_FUNCTIONS(IRIS_RESOLVE_DRIVER_FUNCTION)
#undef IRIS_RESOLVE_DRIVER_FUNCTION
  return driver;
}

const Driver& driver() {
  static LoadedOnce<Driver> process_driver;
  return process_driver.get([] {
    // Every kernel of a module loaded with the module, not at its first launch (CUDA's default since
    // 12.2 is LAZY): a lazy load at a launch waits for the context's work in flight while holding the
    // driver, so a kernel that spins until another thread's copy or another stream's kernel arrives
    // never sees it (2 x H200: a kernel queued behind one waiting for a put across nodes stopped the
    // host proxy's copy of that put; docs/decisions.md). A user's own CUDA_MODULE_LOADING stays.
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    Driver loaded = load_driver("libcuda.so.1");
    CUresult result = loaded.cuInit(0);
    if (result != CUDA_SUCCESS) {
      throw Error(Errc::environment, format("the NVIDIA driver (CUDA %s) cannot start: cuInit returned %s",
                                            version_text(loaded.version).c_str(), error_text(&loaded, result).c_str()));
    }
    return loaded;
  });
}

std::string error_text(const Driver* driver, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver && driver->cuGetErrorName) driver->cuGetErrorName(result, &name);
  if (driver && driver->cuGetErrorString) driver->cuGetErrorString(result, &text);
  if (!name) return format("CUresult %d", static_cast<int>(result));
  return text ? format("%s (%s)", name, text) : std::string(name);
}

bool is_device_fault(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
      return true;
    default:
      return false;
  }
}

}  // namespace iris::runtime::cuda
