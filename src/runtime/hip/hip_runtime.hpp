// The HIP runtime API, opened at run time from libamdhip64 (never linked), so iris-lua starts on
// machines without ROCm (the NVIDIA machines have none) and `auto` moves on with the reason.
//
// Types, prototypes and enum values come from the HIP headers iris-lua is built with, so the runtime
// must be the same major version as those headers: loading checks hipRuntimeGetVersion and says so
// otherwise. Symbol names go through the headers' macros (ROCm 6 maps some functions to versioned
// symbols, e.g. hipGetDeviceProperties to hipGetDevicePropertiesR0600), as for the CUDA driver.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <string>
#include <vector>

namespace iris::runtime::hip {

// Every runtime function the backend calls, except hipHostMalloc (overloaded in C++; declared below).
#define IRIS_HIP_RUNTIME_FUNCTIONS(X)                                                                         \
  X(hipGetErrorName) X(hipGetErrorString) X(hipRuntimeGetVersion)                                             \
  X(hipGetDeviceCount) X(hipSetDevice) X(hipDeviceGetName) X(hipDeviceGetAttribute) X(hipGetDeviceProperties) \
  X(hipDeviceGetPCIBusId) X(hipDeviceCanAccessPeer) X(hipDeviceEnablePeerAccess)                              \
  X(hipStreamCreateWithFlags) X(hipStreamDestroy) X(hipStreamQuery)                                           \
  X(hipExtMallocWithFlags) X(hipFree) X(hipMemGetInfo)                                                        \
  X(hipIpcGetMemHandle) X(hipIpcOpenMemHandle) X(hipIpcCloseMemHandle)                                        \
  X(hipHostGetDevicePointer) X(hipHostFree)                                                                   \
  X(hipMemcpyAsync) X(hipMemsetD8Async) X(hipMemsetD16Async) X(hipMemsetD32Async)                             \
  X(hipModuleLoadData) X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleGetGlobal)                       \
  X(hipFuncGetAttribute) X(hipModuleLaunchKernel)                                                             \
  X(hipEventCreate) X(hipEventDestroy) X(hipEventRecord) X(hipEventQuery) X(hipEventElapsedTime)                \
  X(hipEventCreateWithFlags) X(hipStreamWaitEvent) X(hipStreamCreateWithPriority)                             \
  X(hipDeviceGetStreamPriorityRange)                                                                          \
  X(hipStreamBeginCapture) X(hipStreamEndCapture) X(hipGraphGetNodes) X(hipGraphInstantiate)                  \
  X(hipGraphLaunch) X(hipGraphExecDestroy) X(hipGraphDestroy)

struct Runtime {
#define IRIS_DECLARE_RUNTIME_FUNCTION(function) decltype(&::function) function = nullptr;
  IRIS_HIP_RUNTIME_FUNCTIONS(IRIS_DECLARE_RUNTIME_FUNCTION)
#undef IRIS_DECLARE_RUNTIME_FUNCTION
  hipError_t (*hipHostMalloc)(void** ptr, size_t size, unsigned int flags) = nullptr;
  int version = 0;      // hipRuntimeGetVersion: major * 10000000 + minor * 100000 + patch
};

// Opens the first loadable of `libraries` and resolves every function. Throws Error(environment) when
// none opens, a function is missing or the major version differs from the headers'. Tests pass other
// names.
Runtime load_runtime(const std::vector<std::string>& libraries);

// The process's runtime (libamdhip64.so.<major of the headers>, then libamdhip64.so), loaded on first
// use. Throws Error(environment) saying why there is no usable HIP; later calls throw the same.
const Runtime& runtime();

// "hipErrorIllegalAddress (an illegal memory access was encountered)"; "hipError_t 700" when the
// runtime cannot name it.
std::string error_text(const Runtime* runtime, hipError_t error);

// Errors after which the device is unusable: the kernel faulted, trapped or asserted.
bool is_device_fault(hipError_t error);

// "5.2" from hipRuntimeGetVersion's number.
std::string version_text(int version);

}  // namespace iris::runtime::hip
