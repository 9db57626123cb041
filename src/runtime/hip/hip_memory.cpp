// The hip backend's memory: the symmetric heap in fine-grained device memory (exported and imported
// through HIP IPC), mapped host memory, copies and fills. Every operation is enqueued on the backend's
// stream, after the kernels launched before it, and waited for.
//
// Fine-grained, as Iris allocates it: coarse-grained memory is coherent only at kernel boundaries, so
// a flag another GPU writes, or an atomic from another GPU, would not be seen by a kernel polling it.
#include <strings.h>

#include <cstring>

#include "core/log.hpp"
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/gpu/pattern_fill.hpp"
#include "runtime/hip/hip_backend_impl.hpp"

namespace iris::runtime {

// --- symmetric heap ----------------------------------------------------------------------------------

void* HipBackend::allocate_heap(size_t bytes) {
  throw_if_faulted();
  if (heap_) throw Error(Errc::internal, "the symmetric heap is allocated once per backend");
  if (bytes == 0) throw Error(Errc::invalid_argument, "a symmetric heap of 0 bytes");
  bind();
  void* heap = nullptr;
  hipError_t result = api.hipExtMallocWithFlags(&heap, bytes, hipDeviceMallocFinegrained);
  if (result == hipErrorOutOfMemory) {
    size_t free_bytes = 0, total_bytes = 0;
    (void)api.hipMemGetInfo(&free_bytes, &total_bytes);  // for the message only
    throw Error(Errc::environment,
                format("cannot allocate a %s symmetric heap on GPU %d (%s): %s free of %s (ranks sharing this GPU "
                       "hold a heap each); ask for less with iris.init{heap_size=} or IRIS_HEAP_SIZE",
                       human_bytes(bytes).c_str(), device_, device_name_.c_str(), human_bytes(free_bytes).c_str(),
                       human_bytes(total_bytes).c_str()));
  }
  check(result, "hipExtMallocWithFlags",
        format("allocating a %s fine-grained symmetric heap on GPU %d", human_bytes(bytes).c_str(), device_));
  heap_ = heap;
  heap_bytes_ = bytes;
  // A fresh heap reads as zeros, as on the other backends.
  check(api.hipMemsetD8Async(heap_, 0, bytes, stream_), "hipMemsetD8Async", "zeroing the heap");
  wait_stream("zeroing the heap");
  return heap_;
}

std::string HipBackend::pci_bus_id(int device) const {
  char id[32] = {};
  hipError_t result = api.hipDeviceGetPCIBusId(id, sizeof id - 1, device);
  if (result != hipSuccess) {
    throw Error(Errc::environment, format("reading a GPU's PCI bus id: hipDeviceGetPCIBusId returned %s",
                                          hip::error_text(&api, result).c_str()));
  }
  return id;
}

int HipBackend::ordinal_of_bus(const std::string& bus) const {
  for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
    if (strcasecmp(pci_bus_id(ordinal).c_str(), bus.c_str()) == 0) return ordinal;
  }
  return -1;
}

std::vector<uint8_t> HipBackend::export_heap() {
  throw_if_faulted();
  if (!heap_) throw Error(Errc::internal, "export_heap() before allocate_heap()");
  bind();
  hipIpcMemHandle_t ipc;
  check(api.hipIpcGetMemHandle(&ipc, heap_), "hipIpcGetMemHandle", "exporting the heap to the other ranks");
  gpu::HeapHandle handle;
  handle.backend = "hip";
  handle.pci_bus_id = pci_bus_id(device_);
  handle.bytes = heap_bytes_;
  static_assert(sizeof ipc == sizeof handle.ipc, "a HIP IPC handle is 64 bytes");
  std::memcpy(handle.ipc.data(), &ipc, sizeof ipc);
  return gpu::encode_heap_handle(handle);
}

void* HipBackend::import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& bytes_in, size_t bytes) {
  throw_if_faulted();
  // A process cannot open its own IPC handle; its own heap needs no mapping.
  if (peer == comm_.rank()) return heap_;
  if (auto known = peers_.find(peer); known != peers_.end()) return known->second;

  const gpu::HeapHandle handle = gpu::decode_heap_handle(bytes_in, "hip", peer);
  gpu::check_peer_heap_size(handle, bytes, peer);
  const int ordinal = ordinal_of_bus(handle.pci_bus_id);
  if (ordinal < 0) gpu::throw_peer_gpu_not_visible(peer, handle.pci_bus_id, "HIP_VISIBLE_DEVICES");
  if (ordinal != peer_device) {
    log::write(log::Level::debug, format("hip: rank %d's GPU %d is GPU %d in this process", peer, peer_device, ordinal));
  }
  bind();
  if (ordinal != device_) {
    int can_access = 0;
    check(api.hipDeviceCanAccessPeer(&can_access, device_, ordinal), "hipDeviceCanAccessPeer",
          format("asking whether GPU %d reaches GPU %d", device_, ordinal));
    if (!can_access) gpu::throw_no_peer_path(device_, device_name_, ordinal, peer, "hipDeviceCanAccessPeer");
    // Explicitly, on top of the IPC flag below: HIP versions differ in what that flag does.
    hipError_t result = api.hipDeviceEnablePeerAccess(ordinal, 0);
    if (result != hipErrorPeerAccessAlreadyEnabled) {
      check(result, "hipDeviceEnablePeerAccess", format("letting GPU %d reach GPU %d", device_, ordinal));
    }
  }
  hipIpcMemHandle_t ipc;
  std::memcpy(&ipc, handle.ipc.data(), sizeof ipc);
  void* base = nullptr;
  check(api.hipIpcOpenMemHandle(&base, ipc, hipIpcMemLazyEnablePeerAccess), "hipIpcOpenMemHandle",
        format("opening rank %d's heap (GPU %d, PCI bus %s) through HIP IPC (IPC reaches the ranks of one node)", peer,
               ordinal, handle.pci_bus_id.c_str()));
  peers_[peer] = base;
  return base;
}

void HipBackend::release_heaps() {
  if (faults_.faulted()) {  // the device is unusable: the process ends and the runtime frees everything
    peers_.clear();
    heap_ = nullptr;
    return;
  }
  if (peers_.empty() && !heap_) return;
  wait_stream("finishing device work before freeing the heap");
  std::string failures;
  for (const auto& [peer, base] : peers_) {
    hipError_t result = api.hipIpcCloseMemHandle(base);
    if (result != hipSuccess) {
      failures += format("; closing rank %d's heap: hipIpcCloseMemHandle returned %s", peer,
                         hip::error_text(&api, result).c_str());
    }
  }
  peers_.clear();
  if (heap_) {
    hipError_t result = api.hipFree(heap_);
    if (result != hipSuccess) failures += "; freeing the heap: hipFree returned " + hip::error_text(&api, result);
    heap_ = nullptr;
    heap_bytes_ = 0;
  }
  if (!failures.empty()) throw Error(Errc::internal, format("releasing the heaps on GPU %d", device_) + failures);
}

// --- mapped host memory ------------------------------------------------------------------------------

MappedHostBuffer HipBackend::allocate_mapped_host(size_t bytes) {
  throw_if_faulted();
  bind();
  void* host = nullptr;
  // Coherent: the host sees what a kernel wrote while the kernel still runs (the mailbox is read
  // after a fault, without any synchronization that would flush caches).
  check(api.hipHostMalloc(&host, bytes, hipHostMallocMapped | hipHostMallocPortable | hipHostMallocCoherent),
        "hipHostMalloc", format("allocating %s of mapped host memory", human_bytes(bytes).c_str()));
  void* device = nullptr;
  hipError_t result = api.hipHostGetDevicePointer(&device, host, 0);
  if (result != hipSuccess) {
    (void)api.hipHostFree(host);  // the mapping error below is the one to report
    check(result, "hipHostGetDevicePointer", "mapping host memory into the GPU");
  }
  std::memset(host, 0, bytes);
  return MappedHostBuffer{host, device, bytes};
}

void HipBackend::free_mapped_host(MappedHostBuffer& buffer) {
  if (!buffer.host) return;
  if (mailbox_.host == buffer.host) mailbox_ = MappedHostBuffer{};
  if (!faults_.faulted()) {
    bind();
    check(api.hipHostFree(buffer.host), "hipHostFree", "freeing mapped host memory", Errc::internal);
  }
  buffer = MappedHostBuffer{};
}

// --- copies and fills ----------------------------------------------------------------------------------

void HipBackend::copy(hipError_t enqueued, const char* call, const std::string& what) {
  check(enqueued, call, what, Errc::invalid_argument);
  wait_stream(what.c_str());
}

void HipBackend::transfer(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, const std::string& what) {
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  copy(api.hipMemcpyAsync(dst, src, bytes, kind, stream_), "hipMemcpyAsync", what);
}

void HipBackend::copy_to_host(void* host, const void* device, size_t bytes) {
  transfer(host, device, bytes, hipMemcpyDeviceToHost,
           format("copying %s from GPU address %p to the host", human_bytes(bytes).c_str(), device));
}

void HipBackend::copy_from_host(void* device, const void* host, size_t bytes) {
  transfer(device, host, bytes, hipMemcpyHostToDevice,
           format("copying %s from the host to GPU address %p", human_bytes(bytes).c_str(), device));
}

void HipBackend::copy_device(void* dst, const void* src, size_t bytes) {
  transfer(dst, src, bytes, hipMemcpyDeviceToDevice,
           format("copying %s from GPU address %p to %p", human_bytes(bytes).c_str(), src, dst));
}

void HipBackend::fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) {
  if (count == 0) return;
  throw_if_faulted();
  bind();
  const gpu::FillPlan plan = gpu::plan_fill(reinterpret_cast<uintptr_t>(device), pattern, pattern_bytes, count);
  const std::string what = format("filling %zu x %zu bytes at GPU address %p", count, pattern_bytes, device);
  switch (plan.method) {
    case gpu::FillMethod::memset8:
      copy(api.hipMemsetD8Async(device, static_cast<unsigned char>(plan.value), plan.elements, stream_),
           "hipMemsetD8Async", what);
      break;
    case gpu::FillMethod::memset16:
      copy(api.hipMemsetD16Async(device, static_cast<unsigned short>(plan.value), plan.elements, stream_),
           "hipMemsetD16Async", what);
      break;
    case gpu::FillMethod::memset32:
      copy(api.hipMemsetD32Async(device, static_cast<int>(plan.value), plan.elements, stream_), "hipMemsetD32Async",
           what);
      break;
    case gpu::FillMethod::doubling:
      fill_by_doubling(static_cast<char*>(device), pattern, pattern_bytes, count);
      break;
  }
}

void HipBackend::fill_by_doubling(char* dst, const void* pattern, size_t pattern_bytes, size_t count) {
  const std::vector<uint8_t> seed = gpu::fill_seed(pattern, pattern_bytes, count);
  check(api.hipMemcpyAsync(dst, seed.data(), seed.size(), hipMemcpyHostToDevice, stream_), "hipMemcpyAsync",
        "seeding a fill pattern", Errc::invalid_argument);
  for (const gpu::CopyStep& step : gpu::doubling_copies(seed.size(), count * pattern_bytes)) {
    check(api.hipMemcpyAsync(dst + step.dst_offset, dst + step.src_offset, step.bytes, hipMemcpyDeviceToDevice,
                             stream_),
          "hipMemcpyAsync", "extending a fill pattern", Errc::invalid_argument);
  }
  wait_stream("filling GPU memory");  // before `seed` goes away
}

}  // namespace iris::runtime
