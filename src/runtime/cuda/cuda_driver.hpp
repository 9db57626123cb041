// The CUDA driver API, opened at run time from libcuda.so.1 (never linked), so iris-lua starts on
// machines without an NVIDIA driver.
//
// Types and prototypes come from the toolkit's cuda.h. Symbol names come from cuda.h too: it maps
// each function whose ABI changed to its versioned symbol (`#define cuMemAlloc cuMemAlloc_v2`), and
// both the member declarations and the dlsym names below go through those macros, so each pointer has
// exactly the prototype the header declares. A driver older than the header lacks some versioned
// symbol, and loading says which one.
#pragma once

#include <cuda.h>

#include <string>

namespace iris::runtime::cuda {

// Every driver function the backend calls.
#define IRIS_CUDA_DRIVER_FUNCTIONS(X)                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                                 \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceGetPCIBusId)  \
  X(cuDeviceCanAccessPeer) X(cuDeviceGetP2PAttribute)                                                   \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)                           \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamQuery) X(cuStreamWaitEvent)                            \
  X(cuStreamCreateWithPriority) X(cuCtxGetStreamPriorityRange)                                          \
  X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuPointerSetAttribute)                                   \
  X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle)                                     \
  X(cuMemHostAlloc) X(cuMemHostGetDevicePointer) X(cuMemFreeHost)                                       \
  X(cuMemcpyDtoHAsync) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoDAsync) X(cuMemcpyAsync)                                      \
  X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)                                            \
  X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal)                   \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx)                      \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventElapsedTime)                \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphGetNodes) X(cuGraphInstantiate)                \
  X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)                                              \
  X(cuTensorMapEncodeTiled)

struct Driver {
#define IRIS_DECLARE_DRIVER_FUNCTION(function) decltype(&::function) function = nullptr;
  IRIS_CUDA_DRIVER_FUNCTIONS(IRIS_DECLARE_DRIVER_FUNCTION)
#undef IRIS_DECLARE_DRIVER_FUNCTION
  int version = 0;      // cuDriverGetVersion: 13000 for CUDA 13.0
};

// Opens `library` and resolves every function (no cuInit). Throws Error(environment) when the library
// cannot be opened or lacks a function, saying what to do. Tests pass other names.
Driver load_driver(const char* library);

// The process's driver: libcuda.so.1, loaded and initialized (cuInit) on first use. Throws
// Error(environment) saying why there is no usable NVIDIA driver; later calls throw the same.
const Driver& driver();

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"; "CUresult 700" when the
// driver cannot name it.
std::string error_text(const Driver* driver, CUresult result);

// Errors after which the context is unusable (sticky): the kernel faulted, trapped or asserted.
bool is_device_fault(CUresult result);

// "13.0" from 13000.
std::string version_text(int version);

}  // namespace iris::runtime::cuda
