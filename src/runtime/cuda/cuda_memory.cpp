// The cuda backend's memory: the symmetric heap (cuMemAlloc, exported and imported through CUDA IPC),
// mapped host memory, copies and fills. Every operation is enqueued on the backend's stream, after the
// kernels launched before it, and waited for.
#include <strings.h>

#include <cstring>

#include "core/log.hpp"
#include "runtime/cuda/cuda_backend_impl.hpp"
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/gpu/pattern_fill.hpp"

namespace iris::runtime {

namespace {

CUdeviceptr address_of(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }
void* pointer_to(CUdeviceptr address) { return reinterpret_cast<void*>(address); }

}  // namespace

// --- symmetric heap ----------------------------------------------------------------------------------

void* CudaBackend::allocate_heap(size_t bytes) {
  throw_if_faulted();
  if (heap_) throw Error(Errc::internal, "the symmetric heap is allocated once per backend");
  if (bytes == 0) throw Error(Errc::invalid_argument, "a symmetric heap of 0 bytes");
  bind();
  CUdeviceptr heap = 0;
  CUresult result = cu.cuMemAlloc(&heap, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_bytes = 0, total_bytes = 0;
    cu.cuMemGetInfo(&free_bytes, &total_bytes);
    throw Error(Errc::environment,
                format("cannot allocate a %s symmetric heap on GPU %d (%s): %s free of %s (ranks sharing this GPU "
                       "hold a heap each); ask for less with iris.init{heap_size=} or IRIS_HEAP_SIZE",
                       human_bytes(bytes).c_str(), device_, device_name_.c_str(), human_bytes(free_bytes).c_str(),
                       human_bytes(total_bytes).c_str()));
  }
  check(result, "cuMemAlloc", format("allocating a %s symmetric heap on GPU %d", human_bytes(bytes).c_str(), device_));
  heap_ = heap;
  heap_bytes_ = bytes;
  // Synchronous copies into the heap, from any stream or library of this process, then wait for the
  // device work on it instead of racing it.
  unsigned int sync_memops = 1;
  check(cu.cuPointerSetAttribute(&sync_memops, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, heap_), "cuPointerSetAttribute",
        "making copies into the heap synchronous");
  // A fresh heap reads as zeros, as on the other backends.
  check(cu.cuMemsetD8Async(heap_, 0, bytes, stream_), "cuMemsetD8Async", "zeroing the heap");
  wait_stream("zeroing the heap");
  return pointer_to(heap_);
}

std::string CudaBackend::pci_bus_id(CUdevice device) const {
  char id[32] = {};
  CUresult result = cu.cuDeviceGetPCIBusId(id, sizeof id - 1, device);
  if (result != CUDA_SUCCESS) {
    throw Error(Errc::environment, format("reading a GPU's PCI bus id: cuDeviceGetPCIBusId returned %s",
                                          cuda::error_text(&cu, result).c_str()));
  }
  return id;
}

int CudaBackend::ordinal_of_bus(const std::string& bus) const {
  for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
    CUdevice device = 0;
    if (cu.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) continue;
    if (strcasecmp(pci_bus_id(device).c_str(), bus.c_str()) == 0) return ordinal;
  }
  return -1;
}

std::vector<uint8_t> CudaBackend::export_heap() {
  throw_if_faulted();
  if (!heap_) throw Error(Errc::internal, "export_heap() before allocate_heap()");
  bind();
  CUipcMemHandle ipc;
  check(cu.cuIpcGetMemHandle(&ipc, heap_), "cuIpcGetMemHandle", "exporting the heap to the other ranks");
  gpu::HeapHandle handle;
  handle.backend = "cuda";
  handle.pci_bus_id = pci_bus_id(cu_device_);
  handle.bytes = heap_bytes_;
  static_assert(sizeof ipc == sizeof handle.ipc, "a CUDA IPC handle is 64 bytes");
  std::memcpy(handle.ipc.data(), &ipc, sizeof ipc);
  return gpu::encode_heap_handle(handle);
}

void* CudaBackend::import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& bytes_in, size_t bytes) {
  throw_if_faulted();
  // A process cannot open its own IPC handle; its own heap needs no mapping.
  if (peer == comm_.rank()) return pointer_to(heap_);
  if (auto known = peers_.find(peer); known != peers_.end()) return pointer_to(known->second);

  const gpu::HeapHandle handle = gpu::decode_heap_handle(bytes_in, "cuda", peer);
  gpu::check_peer_heap_size(handle, bytes, peer);
  const int ordinal = ordinal_of_bus(handle.pci_bus_id);
  if (ordinal < 0) gpu::throw_peer_gpu_not_visible(peer, handle.pci_bus_id, "CUDA_VISIBLE_DEVICES");
  if (ordinal != peer_device) {
    log::write(log::Level::debug, format("cuda: rank %d's GPU %d is GPU %d in this process", peer, peer_device, ordinal));
  }
  bind();
  if (ordinal != device_) {
    CUdevice peer_gpu = 0;
    check(cu.cuDeviceGet(&peer_gpu, ordinal), "cuDeviceGet", format("opening GPU %d", ordinal));
    int can_access = 0;
    check(cu.cuDeviceCanAccessPeer(&can_access, cu_device_, peer_gpu), "cuDeviceCanAccessPeer",
          format("asking whether GPU %d reaches GPU %d", device_, ordinal));
    if (!can_access) gpu::throw_no_peer_path(device_, device_name_, ordinal, peer, "cuDeviceCanAccessPeer");
    int native_atomics = 0;
    cu.cuDeviceGetP2PAttribute(&native_atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, cu_device_, peer_gpu);
    if (!native_atomics && !warned_atomics_) {
      warned_atomics_ = true;
      log::write(log::Level::warning,
                 format("cuda: the link from GPU %d to GPU %d has no native atomics: device atomics on rank %d's heap "
                        "are not atomic with respect to that GPU",
                        device_, ordinal, peer));
    }
  }
  CUipcMemHandle ipc;
  std::memcpy(&ipc, handle.ipc.data(), sizeof ipc);
  CUdeviceptr base = 0;
  // Lazy peer access: the driver enables this context's access to the exporter's GPU as the mapping
  // needs it, without creating a context on that GPU (which would cost its memory).
  check(cu.cuIpcOpenMemHandle(&base, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), "cuIpcOpenMemHandle",
        format("opening rank %d's heap (GPU %d, PCI bus %s) through CUDA IPC (IPC reaches the ranks of one node)", peer,
               ordinal, handle.pci_bus_id.c_str()));
  peers_[peer] = base;
  return pointer_to(base);
}

void CudaBackend::release_heaps() {
  if (faults_.faulted()) {  // the context is unusable: the process ends and the driver frees everything
    peers_.clear();
    heap_ = 0;
    return;
  }
  if (peers_.empty() && !heap_) return;
  wait_stream("finishing device work before freeing the heap");
  std::string failures;
  for (const auto& [peer, base] : peers_) {
    CUresult result = cu.cuIpcCloseMemHandle(base);
    if (result != CUDA_SUCCESS) {
      failures += format("; closing rank %d's heap: cuIpcCloseMemHandle returned %s", peer,
                         cuda::error_text(&cu, result).c_str());
    }
  }
  peers_.clear();
  if (heap_) {
    CUresult result = cu.cuMemFree(heap_);
    if (result != CUDA_SUCCESS) failures += "; freeing the heap: cuMemFree returned " + cuda::error_text(&cu, result);
    heap_ = 0;
    heap_bytes_ = 0;
  }
  if (!failures.empty()) throw Error(Errc::internal, format("releasing the heaps on GPU %d", device_) + failures);
}

// --- mapped host memory ------------------------------------------------------------------------------

MappedHostBuffer CudaBackend::allocate_mapped_host(size_t bytes) {
  throw_if_faulted();
  bind();
  void* host = nullptr;
  check(cu.cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
        format("allocating %s of mapped host memory", human_bytes(bytes).c_str()));
  CUdeviceptr device = 0;
  CUresult result = cu.cuMemHostGetDevicePointer(&device, host, 0);
  if (result != CUDA_SUCCESS) {
    cu.cuMemFreeHost(host);
    check(result, "cuMemHostGetDevicePointer", "mapping host memory into the GPU");
  }
  std::memset(host, 0, bytes);
  return MappedHostBuffer{host, pointer_to(device), bytes};
}

void CudaBackend::free_mapped_host(MappedHostBuffer& buffer) {
  if (!buffer.host) return;
  if (mailbox_.host == buffer.host) mailbox_ = MappedHostBuffer{};
  // After a fault the pinned pages stay until the process ends, which is soon.
  if (!faults_.faulted()) {
    bind();
    check(cu.cuMemFreeHost(buffer.host), "cuMemFreeHost", "freeing mapped host memory", Errc::internal);
  }
  buffer = MappedHostBuffer{};
}

// --- copies and fills ----------------------------------------------------------------------------------

void CudaBackend::copy(CUresult enqueued, const char* call, const std::string& what) {
  check(enqueued, call, what, Errc::invalid_argument);
  wait_stream(what.c_str());
}

void CudaBackend::copy_to_host(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  copy(cu.cuMemcpyDtoHAsync(host, address_of(device), bytes, stream_), "cuMemcpyDtoHAsync",
       format("copying %s from GPU address %p to the host", human_bytes(bytes).c_str(), device));
}

void CudaBackend::copy_from_host(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  copy(cu.cuMemcpyHtoDAsync(address_of(device), host, bytes, stream_), "cuMemcpyHtoDAsync",
       format("copying %s from the host to GPU address %p", human_bytes(bytes).c_str(), device));
}

// Peer heaps are mapped into this context (IPC), so a plain device-to-device copy reaches them through
// unified addressing and the copy engine takes the NVLink path; cuMemcpyPeerAsync would want the peer
// process's context, which this process does not have.
void CudaBackend::copy_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  copy(cu.cuMemcpyDtoDAsync(address_of(dst), address_of(src), bytes, stream_), "cuMemcpyDtoDAsync",
       format("copying %s from GPU address %p to %p", human_bytes(bytes).c_str(), src, dst));
}

void CudaBackend::fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) {
  if (count == 0) return;
  throw_if_faulted();
  bind();
  const CUdeviceptr dst = address_of(device);
  const gpu::FillPlan plan = gpu::plan_fill(dst, pattern, pattern_bytes, count);
  const std::string what = format("filling %zu x %zu bytes at GPU address %p", count, pattern_bytes, device);
  switch (plan.method) {
    case gpu::FillMethod::memset8:
      copy(cu.cuMemsetD8Async(dst, static_cast<unsigned char>(plan.value), plan.elements, stream_), "cuMemsetD8Async",
           what);
      break;
    case gpu::FillMethod::memset16:
      copy(cu.cuMemsetD16Async(dst, static_cast<unsigned short>(plan.value), plan.elements, stream_),
           "cuMemsetD16Async", what);
      break;
    case gpu::FillMethod::memset32:
      copy(cu.cuMemsetD32Async(dst, plan.value, plan.elements, stream_), "cuMemsetD32Async", what);
      break;
    case gpu::FillMethod::doubling:
      fill_by_doubling(dst, pattern, pattern_bytes, count);
      break;
  }
}

void CudaBackend::fill_by_doubling(CUdeviceptr dst, const void* pattern, size_t pattern_bytes, size_t count) {
  const std::vector<uint8_t> seed = gpu::fill_seed(pattern, pattern_bytes, count);
  check(cu.cuMemcpyHtoDAsync(dst, seed.data(), seed.size(), stream_), "cuMemcpyHtoDAsync",
        "seeding a fill pattern", Errc::invalid_argument);
  for (const gpu::CopyStep& step : gpu::doubling_copies(seed.size(), count * pattern_bytes)) {
    check(cu.cuMemcpyDtoDAsync(dst + step.dst_offset, dst + step.src_offset, step.bytes, stream_), "cuMemcpyDtoDAsync",
          "extending a fill pattern", Errc::invalid_argument);
  }
  wait_stream("filling GPU memory");  // before `seed` goes away
}

}  // namespace iris::runtime
