// The cuda backend's own memory steps: the symmetric heap's device memory (cuMemAlloc, SYNC_MEMOPS) and
// peer access to another GPU's heap. Allocating (the checks, zeroing), exporting, importing and
// releasing the heap, mapped host memory, copies and fills are shared with the hip backend
// (gpu/memory.hpp).
#include "core/log.hpp"
#include "runtime/cuda/cuda_backend_impl.hpp"
#include "runtime/gpu/heap_handle.hpp"

namespace iris::runtime {

void* CudaBackend::allocate_heap_memory(size_t bytes) {
  CUdeviceptr heap = 0;
  CUresult result = cu.cuMemAlloc(&heap, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
  check(result, "cuMemAlloc", format("allocating a %s symmetric heap on GPU %d", human_bytes(bytes).c_str(), device_));
  // Synchronous copies into the heap, from any stream or library of this process, then wait for the
  // device work on it instead of racing it.
  unsigned int sync_memops = 1;
  check(cu.cuPointerSetAttribute(&sync_memops, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, heap), "cuPointerSetAttribute",
        "making copies into the heap synchronous");
  return cuda::Api::pointer(heap);
}

void CudaBackend::reach_peer_gpu(int ordinal, int peer) {
  CUdevice peer_gpu = 0;
  check(cu.cuDeviceGet(&peer_gpu, ordinal), "cuDeviceGet", format("opening GPU %d", ordinal));
  int can_access = 0;
  check(cu.cuDeviceCanAccessPeer(&can_access, device_handle_, peer_gpu), "cuDeviceCanAccessPeer",
        format("asking whether GPU %d reaches GPU %d", device_, ordinal));
  if (!can_access) gpu::throw_no_peer_path(device_, device_name_, ordinal, peer, "cuDeviceCanAccessPeer");
  // Access itself is enabled lazily by the IPC mapping (cuda::Api::ipc_open_handle). Atomics over a
  // link without native atomics still work, but are not atomic with respect to the peer's own GPU.
  int native_atomics = 0;
  cu.cuDeviceGetP2PAttribute(&native_atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, device_handle_,
                             peer_gpu);
  if (!native_atomics && !warned_atomics_) {
    warned_atomics_ = true;
    log::write(log::Level::warning,
               format("cuda: the link from GPU %d to GPU %d has no native atomics: device atomics on rank %d's heap "
                      "are not atomic with respect to that GPU",
                      device_, ordinal, peer));
  }
}

}  // namespace iris::runtime
