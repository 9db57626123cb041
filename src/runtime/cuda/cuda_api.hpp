// The CUDA driver as the code both GPU backends share sees it (gpu/gpu_backend.hpp): the driver's
// types under common names, a few constants, and one thin wrapper per call that shared code makes.
// Each wrapper is exactly one driver call (the same arguments the cuda backend always passed) and
// returns its status with the call's name for messages. hip/hip_api.hpp is the same for HIP.
//
// What only the cuda backend does (the context, device attributes, the heap's allocation, peer
// access, loading PTX) calls the driver table directly and is not here.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/cuda/cuda_driver.hpp"
#include "runtime/gpu/vendor_call.hpp"

namespace iris::runtime::cuda {

struct Api {
  using Status = CUresult;
  using Returned = gpu::Returned<CUresult>;
  using Device = CUdevice;
  using Stream = CUstream;
  using Event = CUevent;
  using Module = CUmodule;
  using Function = CUfunction;
  using IpcHandle = CUipcMemHandle;
  using FunctionAttribute = CUfunction_attribute;
  using Graph = CUgraph;
  using GraphExec = CUgraphExec;

  static constexpr const char* name = "cuda";  // the backend: messages, heap handles
  static constexpr const char* vendor_api = "CUDA";
  static constexpr const char* visibility_variable = "CUDA_VISIBLE_DEVICES";
  static constexpr Status success = CUDA_SUCCESS;
  static constexpr Status not_ready = CUDA_ERROR_NOT_READY;
  static constexpr Status not_found = CUDA_ERROR_NOT_FOUND;
  // Above 48 KiB, dynamic shared memory is an opt-in per kernel (set_max_dynamic_shared), up to the
  // device's opt-in maximum (227 KiB on H200), which the device limits already hold.
  static constexpr bool dynamic_shared_opt_in = true;
  // Without MPS, the kernels of processes sharing a GPU run in turns (gpu/device_sharing.hpp).
  static constexpr bool processes_take_turns = true;
  static constexpr FunctionAttribute kernel_max_threads = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
  static constexpr FunctionAttribute kernel_static_shared = CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
  static constexpr FunctionAttribute kernel_dynamic_shared_allowed = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;

  const Driver& cu;

  static bool is_device_fault(Status status) { return cuda::is_device_fault(status); }
  std::string error_text(Status status) const { return cuda::error_text(&cu, status); }

  // --- waiting ---------------------------------------------------------------------------------------
  Returned stream_query(CUstream stream) const { return {cu.cuStreamQuery(stream), "cuStreamQuery"}; }
  Returned event_query(CUevent event) const { return {cu.cuEventQuery(event), "cuEventQuery"}; }

  // --- devices ---------------------------------------------------------------------------------------
  Returned device_get(CUdevice* device, int ordinal) const { return {cu.cuDeviceGet(device, ordinal), "cuDeviceGet"}; }
  Returned device_pci_bus_id(char* id, int length, CUdevice device) const {
    return {cu.cuDeviceGetPCIBusId(id, length, device), "cuDeviceGetPCIBusId"};
  }
  Returned mps_enabled(int* enabled, CUdevice device) const {
    return {cu.cuDeviceGetAttribute(enabled, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, device), "cuDeviceGetAttribute"};
  }

  // --- memory: the heap, IPC, mapped host memory ---------------------------------------------------
  Returned mem_get_info(size_t* free_bytes, size_t* total_bytes) const {
    return {cu.cuMemGetInfo(free_bytes, total_bytes), "cuMemGetInfo"};
  }
  Returned mem_free(void* device) const { return {cu.cuMemFree(address(device)), "cuMemFree"}; }
  Returned ipc_get_handle(CUipcMemHandle* handle, void* device) const {
    return {cu.cuIpcGetMemHandle(handle, address(device)), "cuIpcGetMemHandle"};
  }
  // Lazy peer access: the driver enables this context's access to the exporter's GPU as the mapping
  // needs it, without creating a context on that GPU (which would cost its memory).
  Returned ipc_open_handle(void** device, const CUipcMemHandle& handle) const {
    CUdeviceptr base = 0;
    const CUresult result = cu.cuIpcOpenMemHandle(&base, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    *device = pointer(base);
    return {result, "cuIpcOpenMemHandle"};
  }
  Returned ipc_close_handle(void* device) const { return {cu.cuIpcCloseMemHandle(address(device)), "cuIpcCloseMemHandle"}; }
  Returned host_alloc_mapped(void** host, size_t bytes) const {
    return {cu.cuMemHostAlloc(host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc"};
  }
  Returned host_device_pointer(void** device, void* host) const {
    CUdeviceptr mapped = 0;
    const CUresult result = cu.cuMemHostGetDevicePointer(&mapped, host, 0);
    *device = pointer(mapped);
    return {result, "cuMemHostGetDevicePointer"};
  }
  Returned host_free(void* host) const { return {cu.cuMemFreeHost(host), "cuMemFreeHost"}; }

  // --- copies and fills, enqueued on `stream` ------------------------------------------------------
  Returned copy_to_host(void* host, const void* device, size_t bytes, CUstream stream) const {
    return {cu.cuMemcpyDtoHAsync(host, address(device), bytes, stream), "cuMemcpyDtoHAsync"};
  }
  Returned copy_from_host(void* device, const void* host, size_t bytes, CUstream stream) const {
    return {cu.cuMemcpyHtoDAsync(address(device), host, bytes, stream), "cuMemcpyHtoDAsync"};
  }
  Returned copy_device(void* dst, const void* src, size_t bytes, CUstream stream) const {
    return {cu.cuMemcpyDtoDAsync(address(dst), address(src), bytes, stream), "cuMemcpyDtoDAsync"};
  }
  // Between any two addresses (unified addressing: host, pinned host or device memory).
  Returned copy_any(void* dst, const void* src, size_t bytes, CUstream stream) const {
    return {cu.cuMemcpyAsync(address(dst), address(src), bytes, stream), "cuMemcpyAsync"};
  }
  Returned memset8(void* device, unsigned char value, size_t count, CUstream stream) const {
    return {cu.cuMemsetD8Async(address(device), value, count, stream), "cuMemsetD8Async"};
  }
  Returned memset16(void* device, unsigned short value, size_t count, CUstream stream) const {
    return {cu.cuMemsetD16Async(address(device), value, count, stream), "cuMemsetD16Async"};
  }
  Returned memset32(void* device, uint32_t value, size_t count, CUstream stream) const {
    return {cu.cuMemsetD32Async(address(device), value, count, stream), "cuMemsetD32Async"};
  }

  // --- modules and kernels -----------------------------------------------------------------------------
  Returned module_unload(CUmodule module) const { return {cu.cuModuleUnload(module), "cuModuleUnload"}; }
  Returned module_get_function(CUfunction* function, CUmodule module, const char* symbol) const {
    return {cu.cuModuleGetFunction(function, module, symbol), "cuModuleGetFunction"};
  }
  Returned module_get_global(void** device, size_t* bytes, CUmodule module, const char* symbol) const {
    CUdeviceptr global = 0;
    const CUresult result = cu.cuModuleGetGlobal(&global, bytes, module, symbol);
    *device = pointer(global);
    return {result, "cuModuleGetGlobal"};
  }
  Returned function_attribute(int* value, FunctionAttribute attribute, CUfunction function) const {
    return {cu.cuFuncGetAttribute(value, attribute, function), "cuFuncGetAttribute"};
  }
  Returned set_max_dynamic_shared(CUfunction function, int bytes) const {
    return {cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
            "cuFuncSetAttribute"};
  }
  Returned launch_kernel(CUfunction function, const LaunchConfig& config, CUstream stream, void** args) const {
    if (config.early_start) {  // programmatic dependent launch: the kernel waits for the one ahead itself
      CUlaunchAttribute early{};
      early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      early.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig ex{};
      ex.gridDimX = config.grid.x, ex.gridDimY = config.grid.y, ex.gridDimZ = config.grid.z;
      ex.blockDimX = config.block.x, ex.blockDimY = config.block.y, ex.blockDimZ = config.block.z;
      ex.sharedMemBytes = static_cast<unsigned>(config.shared_bytes);
      ex.hStream = stream;
      ex.attrs = &early;
      ex.numAttrs = 1;
      return {cu.cuLaunchKernelEx(&ex, function, args, nullptr), "cuLaunchKernelEx"};
    }
    return {cu.cuLaunchKernel(function, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
                              config.block.z, static_cast<unsigned>(config.shared_bytes), stream, args, nullptr),
            "cuLaunchKernel"};
  }

  // --- timing events -------------------------------------------------------------------------------------
  Returned event_create(CUevent* event) const { return {cu.cuEventCreate(event, CU_EVENT_DEFAULT), "cuEventCreate"}; }
  Returned event_destroy(CUevent event) const { return {cu.cuEventDestroy(event), "cuEventDestroy"}; }
  Returned event_record(CUevent event, CUstream stream) const {
    return {cu.cuEventRecord(event, stream), "cuEventRecord"};
  }
  Returned event_elapsed_ms(float* ms, CUevent start, CUevent end) const {
    return {cu.cuEventElapsedTime(ms, start, end), "cuEventElapsedTime"};
  }

  // --- the second stream (GpuBackend::select_stream) ------------------------------------------------------
  // Events that only order streams: no timing, the cheaper kind.
  Returned event_create_for_order(CUevent* event) const {
    return {cu.cuEventCreate(event, CU_EVENT_DISABLE_TIMING), "cuEventCreate"};
  }
  Returned stream_wait_event(CUstream stream, CUevent event) const {
    return {cu.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent"};
  }
  // Priorities: a lower number is a higher priority; `greatest` is the highest the device has.
  Returned stream_priority_range(int* least, int* greatest) const {
    return {cu.cuCtxGetStreamPriorityRange(least, greatest), "cuCtxGetStreamPriorityRange"};
  }
  Returned stream_create_with_priority(CUstream* stream, int priority) const {
    return {cu.cuStreamCreateWithPriority(stream, CU_STREAM_NON_BLOCKING, priority), "cuStreamCreateWithPriority"};
  }

  // --- graphs (ctx:capture) --------------------------------------------------------------------------
  // The stream module variables are written on while the backend's stream is being captured.
  Returned stream_create(CUstream* stream) const {
    return {cu.cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"};
  }
  Returned stream_destroy(CUstream stream) const { return {cu.cuStreamDestroy(stream), "cuStreamDestroy"}; }
  // Relaxed: loading a module (a kernel compiled inside the capture) stays allowed meanwhile.
  Returned begin_capture(CUstream stream) const {
    return {cu.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture"};
  }
  Returned end_capture(CUstream stream, CUgraph* graph) const {
    return {cu.cuStreamEndCapture(stream, graph), "cuStreamEndCapture"};
  }
  Returned graph_nodes(CUgraph graph, size_t* count) const {
    return {cu.cuGraphGetNodes(graph, nullptr, count), "cuGraphGetNodes"};
  }
  Returned graph_instantiate(CUgraphExec* exec, CUgraph graph) const {
    return {cu.cuGraphInstantiate(exec, graph, 0), "cuGraphInstantiate"};
  }
  Returned graph_launch(CUgraphExec exec, CUstream stream) const {
    return {cu.cuGraphLaunch(exec, stream), "cuGraphLaunch"};
  }
  Returned graph_exec_destroy(CUgraphExec exec) const { return {cu.cuGraphExecDestroy(exec), "cuGraphExecDestroy"}; }
  Returned graph_destroy(CUgraph graph) const { return {cu.cuGraphDestroy(graph), "cuGraphDestroy"}; }

  // The driver addresses device memory as an integer (CUdeviceptr); the shared code, as a pointer.
  static CUdeviceptr address(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }
  static void* pointer(CUdeviceptr address) { return reinterpret_cast<void*>(address); }
};

}  // namespace iris::runtime::cuda
