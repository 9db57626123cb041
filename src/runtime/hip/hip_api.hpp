// The HIP runtime as the code both GPU backends share sees it (gpu/gpu_backend.hpp): the runtime's
// types under common names, a few constants, and one thin wrapper per call that shared code makes.
// Each wrapper is exactly one runtime call (the same arguments the hip backend always passed) and
// returns its status with the call's name for messages. cuda/cuda_api.hpp is the same for CUDA.
//
// What only the hip backend does (device selection and properties, the fine-grained heap, peer
// access, loading code objects) calls the runtime table directly and is not here.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/gpu/vendor_call.hpp"
#include "runtime/hip/hip_runtime.hpp"

namespace iris::runtime::hip {

struct Api {
  using Status = hipError_t;
  using Returned = gpu::Returned<hipError_t>;
  using Device = int;  // HIP names a device by its ordinal
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using Module = hipModule_t;
  using Function = hipFunction_t;
  using IpcHandle = hipIpcMemHandle_t;
  using FunctionAttribute = hipFunction_attribute;
  using Graph = hipGraph_t;
  using GraphExec = hipGraphExec_t;

  static constexpr const char* name = "hip";  // the backend: messages, heap handles
  static constexpr const char* vendor_api = "HIP";
  static constexpr const char* visibility_variable = "HIP_VISIBLE_DEVICES";
  static constexpr Status success = hipSuccess;
  static constexpr Status not_ready = hipErrorNotReady;
  static constexpr Status not_found = hipErrorNotFound;
  // AMD GPUs have no opt-in: the whole LDS (64 KiB), the device's shared memory limit, is available to
  // every kernel.
  static constexpr bool dynamic_shared_opt_in = false;
  // The kernels of several processes on one AMD GPU share its hardware queues: nothing to start.
  static constexpr bool processes_take_turns = false;
  static constexpr FunctionAttribute kernel_max_threads = HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
  static constexpr FunctionAttribute kernel_static_shared = HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;

  const Runtime& api;

  static bool is_device_fault(Status status) { return hip::is_device_fault(status); }
  std::string error_text(Status status) const { return hip::error_text(&api, status); }

  // --- waiting ---------------------------------------------------------------------------------------
  Returned stream_query(hipStream_t stream) const { return {api.hipStreamQuery(stream), "hipStreamQuery"}; }
  Returned event_query(hipEvent_t event) const { return {api.hipEventQuery(event), "hipEventQuery"}; }

  // --- devices ---------------------------------------------------------------------------------------
  // The ordinal is the device: nothing to ask the runtime (CUDA asks cuDeviceGet).
  Returned device_get(int* device, int ordinal) const {
    *device = ordinal;
    return {hipSuccess, "hipDeviceGet"};
  }
  Returned device_pci_bus_id(char* id, int length, int device) const {
    return {api.hipDeviceGetPCIBusId(id, length, device), "hipDeviceGetPCIBusId"};
  }

  // --- memory: the heap, IPC, mapped host memory ---------------------------------------------------
  Returned mem_get_info(size_t* free_bytes, size_t* total_bytes) const {
    return {api.hipMemGetInfo(free_bytes, total_bytes), "hipMemGetInfo"};
  }
  Returned mem_free(void* device) const { return {api.hipFree(device), "hipFree"}; }
  Returned ipc_get_handle(hipIpcMemHandle_t* handle, void* device) const {
    return {api.hipIpcGetMemHandle(handle, device), "hipIpcGetMemHandle"};
  }
  // Lazy peer access, as on CUDA; the hip backend also enables peer access itself beforehand
  // (HipBackend::reach_peer_gpu), since HIP versions differ in what this flag does.
  Returned ipc_open_handle(void** device, const hipIpcMemHandle_t& handle) const {
    return {api.hipIpcOpenMemHandle(device, handle, hipIpcMemLazyEnablePeerAccess), "hipIpcOpenMemHandle"};
  }
  Returned ipc_close_handle(void* device) const { return {api.hipIpcCloseMemHandle(device), "hipIpcCloseMemHandle"}; }
  // Coherent: the host sees what a kernel wrote while the kernel still runs (the mailbox is read after
  // a fault, without any synchronization that would flush caches).
  Returned host_alloc_mapped(void** host, size_t bytes) const {
    return {api.hipHostMalloc(host, bytes, hipHostMallocMapped | hipHostMallocPortable | hipHostMallocCoherent),
            "hipHostMalloc"};
  }
  Returned host_device_pointer(void** device, void* host) const {
    return {api.hipHostGetDevicePointer(device, host, 0), "hipHostGetDevicePointer"};
  }
  Returned host_free(void* host) const { return {api.hipHostFree(host), "hipHostFree"}; }

  // --- copies and fills, enqueued on `stream` ------------------------------------------------------
  Returned copy_to_host(void* host, const void* device, size_t bytes, hipStream_t stream) const {
    return {api.hipMemcpyAsync(host, device, bytes, hipMemcpyDeviceToHost, stream), "hipMemcpyAsync"};
  }
  Returned copy_from_host(void* device, const void* host, size_t bytes, hipStream_t stream) const {
    return {api.hipMemcpyAsync(device, host, bytes, hipMemcpyHostToDevice, stream), "hipMemcpyAsync"};
  }
  Returned copy_device(void* dst, const void* src, size_t bytes, hipStream_t stream) const {
    return {api.hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream), "hipMemcpyAsync"};
  }
  // Between any two addresses (unified addressing: host, pinned host or device memory).
  Returned copy_any(void* dst, const void* src, size_t bytes, hipStream_t stream) const {
    return {api.hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, stream), "hipMemcpyAsync"};
  }
  Returned memset8(void* device, unsigned char value, size_t count, hipStream_t stream) const {
    return {api.hipMemsetD8Async(device, value, count, stream), "hipMemsetD8Async"};
  }
  Returned memset16(void* device, unsigned short value, size_t count, hipStream_t stream) const {
    return {api.hipMemsetD16Async(device, value, count, stream), "hipMemsetD16Async"};
  }
  Returned memset32(void* device, uint32_t value, size_t count, hipStream_t stream) const {
    return {api.hipMemsetD32Async(device, static_cast<int>(value), count, stream), "hipMemsetD32Async"};
  }

  // --- modules and kernels -----------------------------------------------------------------------------
  Returned module_unload(hipModule_t module) const { return {api.hipModuleUnload(module), "hipModuleUnload"}; }
  Returned module_get_function(hipFunction_t* function, hipModule_t module, const char* symbol) const {
    return {api.hipModuleGetFunction(function, module, symbol), "hipModuleGetFunction"};
  }
  Returned module_get_global(void** device, size_t* bytes, hipModule_t module, const char* symbol) const {
    return {api.hipModuleGetGlobal(device, bytes, module, symbol), "hipModuleGetGlobal"};
  }
  Returned function_attribute(int* value, FunctionAttribute attribute, hipFunction_t function) const {
    return {api.hipFuncGetAttribute(value, attribute, function), "hipFuncGetAttribute"};
  }
  Returned launch_kernel(hipFunction_t function, const LaunchConfig& config, hipStream_t stream, void** args) const {
    return {api.hipModuleLaunchKernel(function, config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                      config.block.y, config.block.z, static_cast<unsigned>(config.shared_bytes),
                                      stream, args, nullptr),
            "hipModuleLaunchKernel"};
  }

  // --- timing events -------------------------------------------------------------------------------------
  Returned event_create(hipEvent_t* event) const { return {api.hipEventCreate(event), "hipEventCreate"}; }
  Returned event_destroy(hipEvent_t event) const { return {api.hipEventDestroy(event), "hipEventDestroy"}; }
  Returned event_record(hipEvent_t event, hipStream_t stream) const {
    return {api.hipEventRecord(event, stream), "hipEventRecord"};
  }
  Returned event_elapsed_ms(float* ms, hipEvent_t start, hipEvent_t end) const {
    return {api.hipEventElapsedTime(ms, start, end), "hipEventElapsedTime"};
  }

  // --- the second stream (GpuBackend::select_stream) ------------------------------------------------------
  // Events that only order streams: no timing, the cheaper kind.
  Returned event_create_for_order(hipEvent_t* event) const {
    return {api.hipEventCreateWithFlags(event, hipEventDisableTiming), "hipEventCreateWithFlags"};
  }
  Returned stream_wait_event(hipStream_t stream, hipEvent_t event) const {
    return {api.hipStreamWaitEvent(stream, event, 0), "hipStreamWaitEvent"};
  }
  // Priorities: a lower number is a higher priority; `greatest` is the highest the device has.
  Returned stream_priority_range(int* least, int* greatest) const {
    return {api.hipDeviceGetStreamPriorityRange(least, greatest), "hipDeviceGetStreamPriorityRange"};
  }
  Returned stream_create_with_priority(hipStream_t* stream, int priority) const {
    return {api.hipStreamCreateWithPriority(stream, hipStreamNonBlocking, priority), "hipStreamCreateWithPriority"};
  }

  // --- graphs (ctx:capture) --------------------------------------------------------------------------
  // The stream module variables are written on while the backend's stream is being captured.
  Returned stream_create(hipStream_t* stream) const {
    return {api.hipStreamCreateWithFlags(stream, hipStreamNonBlocking), "hipStreamCreateWithFlags"};
  }
  Returned stream_destroy(hipStream_t stream) const { return {api.hipStreamDestroy(stream), "hipStreamDestroy"}; }
  // Relaxed: loading a module (a kernel compiled inside the capture) stays allowed meanwhile.
  Returned begin_capture(hipStream_t stream) const {
    return {api.hipStreamBeginCapture(stream, hipStreamCaptureModeRelaxed), "hipStreamBeginCapture"};
  }
  Returned end_capture(hipStream_t stream, hipGraph_t* graph) const {
    return {api.hipStreamEndCapture(stream, graph), "hipStreamEndCapture"};
  }
  Returned graph_nodes(hipGraph_t graph, size_t* count) const {
    return {api.hipGraphGetNodes(graph, nullptr, count), "hipGraphGetNodes"};
  }
  Returned graph_instantiate(hipGraphExec_t* exec, hipGraph_t graph) const {
    return {api.hipGraphInstantiate(exec, graph, nullptr, nullptr, 0), "hipGraphInstantiate"};
  }
  Returned graph_launch(hipGraphExec_t exec, hipStream_t stream) const {
    return {api.hipGraphLaunch(exec, stream), "hipGraphLaunch"};
  }
  Returned graph_exec_destroy(hipGraphExec_t exec) const {
    return {api.hipGraphExecDestroy(exec), "hipGraphExecDestroy"};
  }
  Returned graph_destroy(hipGraph_t graph) const { return {api.hipGraphDestroy(graph), "hipGraphDestroy"}; }
};

}  // namespace iris::runtime::hip
