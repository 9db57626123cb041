#include "runtime/hip/hip_runtime.hpp"

#include "core/error.hpp"
#include "core/dynamic_library.hpp"

namespace iris::runtime::hip {

std::string version_text(int version) { return format("%d.%d", version / 10000000, version / 100000 % 100); }

Runtime load_runtime(const std::vector<std::string>& libraries) {
  DynamicLibrary lib = DynamicLibrary::open(
      libraries, "the HIP runtime",
      "is ROCm's HIP installed (Debian: libamdhip64-5; ROCm: /opt/rocm/lib on the library path)? Without it, run on "
      "another backend (IRIS_BACKEND=cpu)");
  Runtime runtime;
  const auto missing = [&](const char* symbol) {
    return Error(Errc::environment, format("%s has no %s, which iris-lua (built with the HIP %d.%d headers) calls: "
                                           "install the HIP runtime matching those headers",
                                           lib.name().c_str(), symbol, HIP_VERSION_MAJOR, HIP_VERSION_MINOR));
  };
#define IRIS_RESOLVE_RUNTIME_FUNCTION(function)                                                               \
  runtime.function = reinterpret_cast<decltype(runtime.function)>(lib.symbol(IRIS_SYMBOL_NAME(function))); \
  if (!runtime.function) throw missing(IRIS_SYMBOL_NAME(function));
  IRIS_HIP_RUNTIME_FUNCTIONS(IRIS_RESOLVE_RUNTIME_FUNCTION)
  IRIS_RESOLVE_RUNTIME_FUNCTION(hipHostMalloc)
#undef IRIS_RESOLVE_RUNTIME_FUNCTION

  hipError_t error = runtime.hipRuntimeGetVersion(&runtime.version);
  if (error != hipSuccess) {
    throw Error(Errc::environment, format("%s cannot start: hipRuntimeGetVersion returned %s", lib.name().c_str(),
                                          error_text(&runtime, error).c_str()));
  }
  // Enum values and struct layouts come from the headers: another major version may disagree on them.
  if (runtime.version / 10000000 != HIP_VERSION_MAJOR) {
    throw Error(Errc::environment,
                format("%s is HIP %s, and this iris-lua was built with the HIP %d.%d headers: rebuild iris-lua against "
                       "the installed HIP",
                       lib.name().c_str(), version_text(runtime.version).c_str(), HIP_VERSION_MAJOR, HIP_VERSION_MINOR));
  }
  return runtime;
}

const Runtime& runtime() {
  static LoadedOnce<Runtime> process_runtime;
  return process_runtime.get(
      [] { return load_runtime({format("libamdhip64.so.%d", HIP_VERSION_MAJOR), "libamdhip64.so"}); });
}

std::string error_text(const Runtime* runtime, hipError_t error) {
  const char* name = runtime && runtime->hipGetErrorName ? runtime->hipGetErrorName(error) : nullptr;
  const char* text = runtime && runtime->hipGetErrorString ? runtime->hipGetErrorString(error) : nullptr;
  if (!name) return format("hipError_t %d", static_cast<int>(error));
  if (!text || std::string(text) == name) return name;
  return format("%s (%s)", name, text);
}

bool is_device_fault(hipError_t error) {
  switch (error) {
    case hipErrorECCNotCorrectable:
    case hipErrorIllegalAddress:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
    case hipErrorLaunchFailure:
      return true;
    default:
      return false;
  }
}

}  // namespace iris::runtime::hip
