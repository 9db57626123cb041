// The hip backend's own memory steps: the symmetric heap's device memory (fine-grained), and peer
// access to another GPU's heap. Allocating (the checks, zeroing), exporting, importing and releasing the
// heap, mapped host memory, copies and fills are shared with the cuda backend (gpu/memory.hpp).
//
// Fine-grained, as Iris allocates it: coarse-grained memory is coherent only at kernel boundaries, so
// a flag another GPU writes, or an atomic from another GPU, would not be seen by a kernel polling it.
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

void* HipBackend::allocate_heap_memory(size_t bytes) {
  void* heap = nullptr;
  hipError_t result = api.hipExtMallocWithFlags(&heap, bytes, hipDeviceMallocFinegrained);
  if (result == hipErrorOutOfMemory) return nullptr;
  check(result, "hipExtMallocWithFlags",
        format("allocating a %s fine-grained symmetric heap on GPU %d", human_bytes(bytes).c_str(), device_));
  return heap;
}

void HipBackend::reach_peer_gpu(int ordinal, int peer) {
  int can_access = 0;
  check(api.hipDeviceCanAccessPeer(&can_access, device_, ordinal), "hipDeviceCanAccessPeer",
        format("asking whether GPU %d reaches GPU %d", device_, ordinal));
  if (!can_access) gpu::throw_no_peer_path(device_, device_name_, ordinal, peer, "hipDeviceCanAccessPeer");
  // Explicitly, on top of the IPC flag (hip::Api::ipc_open_handle): HIP versions differ in what that
  // flag does.
  hipError_t result = api.hipDeviceEnablePeerAccess(ordinal, 0);
  if (result != hipErrorPeerAccessAlreadyEnabled) {
    check(result, "hipDeviceEnablePeerAccess", format("letting GPU %d reach GPU %d", device_, ordinal));
  }
}

}  // namespace iris::runtime
