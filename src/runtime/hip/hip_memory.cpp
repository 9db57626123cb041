// The hip backend's own memory steps: allocating the symmetric heap in fine-grained device memory, and
// peer access to another GPU's heap. Exporting, importing and releasing the heap, mapped host memory,
// copies and fills are shared with the cuda backend (gpu/memory.hpp).
//
// Fine-grained, as Iris allocates it: coarse-grained memory is coherent only at kernel boundaries, so
// a flag another GPU writes, or an atomic from another GPU, would not be seen by a kernel polling it.
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

void* HipBackend::allocate_heap(size_t bytes) {
  throw_if_faulted();
  if (heap_) throw Error(Errc::internal, "the symmetric heap is allocated once per backend");
  if (bytes == 0) throw Error(Errc::invalid_argument, "a symmetric heap of 0 bytes");
  bind();
  void* heap = nullptr;
  hipError_t result = api.hipExtMallocWithFlags(&heap, bytes, hipDeviceMallocFinegrained);
  if (result == hipErrorOutOfMemory) throw_heap_too_large(bytes);
  check(result, "hipExtMallocWithFlags",
        format("allocating a %s fine-grained symmetric heap on GPU %d", human_bytes(bytes).c_str(), device_));
  heap_ = heap;
  heap_bytes_ = bytes;
  // A fresh heap reads as zeros, as on the other backends.
  check(api.hipMemsetD8Async(heap_, 0, bytes, stream_), "hipMemsetD8Async", "zeroing the heap");
  wait_stream("zeroing the heap");
  return heap_;
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
