// The GPU backends' memory, written once over the vendor adaptor (gpu_backend.hpp): exporting,
// allocating, importing and releasing the symmetric heap (through the vendor's IPC), mapped host memory,
// copies and fills. The heap's device memory is the vendor's (cuda_memory.cpp, hip_memory.cpp), and so
// is peer access.
// Every operation is enqueued on the backend's main stream, after the kernels launched before it (the
// second stream's joined first), and waited for; copy_device_async, on the current stream, is not.
//
// Compiled only where a vendor instantiates GpuBackend (cuda_backend.cpp, hip_backend.cpp).
#pragma once

#include <strings.h>

#include <cstring>

#include "core/log.hpp"
#include "runtime/gpu/gpu_backend.hpp"
#include "runtime/gpu/heap_handle.hpp"
#include "runtime/pattern_fill.hpp"

namespace iris::runtime::gpu {

// --- symmetric heap ----------------------------------------------------------------------------------

template <class Api>
void GpuBackend<Api>::throw_heap_too_large(size_t bytes) const {
  size_t free_bytes = 0, total_bytes = 0;
  (void)calls.mem_get_info(&free_bytes, &total_bytes);  // for the message only
  throw Error(Errc::environment,
              format("cannot allocate a %s symmetric heap on GPU %d (%s): %s free of %s (ranks sharing this GPU "
                     "hold a heap each); ask for less with iris.init{heap_size=} or IRIS_HEAP_SIZE",
                     human_bytes(bytes).c_str(), device_, device_name_.c_str(), human_bytes(free_bytes).c_str(),
                     human_bytes(total_bytes).c_str()));
}

template <class Api>
void* GpuBackend<Api>::allocate_heap(size_t bytes) {
  throw_if_faulted();
  if (heap_) throw Error(Errc::internal, "the symmetric heap is allocated once per backend");
  if (bytes == 0) throw Error(Errc::invalid_argument, "a symmetric heap of 0 bytes");
  bind();
  void* heap = allocate_heap_memory(bytes);
  if (heap == nullptr) throw_heap_too_large(bytes);
  heap_ = heap;
  heap_bytes_ = bytes;
  // A fresh heap reads as zeros, as on the other backends.
  check(calls.memset8(heap_, 0, bytes, stream_), "zeroing the heap");
  wait_stream("zeroing the heap");
  return heap_;
}

template <class Api>
std::string GpuBackend<Api>::pci_bus_id(typename Api::Device device) const {
  char id[32] = {};
  const Returned returned = calls.device_pci_bus_id(id, sizeof id - 1, device);
  if (returned.status != Api::success) {
    throw Error(Errc::environment, format("reading a GPU's PCI bus id: %s returned %s", returned.call,
                                          calls.error_text(returned.status).c_str()));
  }
  return id;
}

template <class Api>
int GpuBackend<Api>::ordinal_of_bus(const std::string& bus) const {
  for (int ordinal = 0; ordinal < device_count_; ++ordinal) {
    typename Api::Device device{};
    if (calls.device_get(&device, ordinal).status != Api::success) continue;
    if (strcasecmp(pci_bus_id(device).c_str(), bus.c_str()) == 0) return ordinal;
  }
  return -1;
}

template <class Api>
std::vector<uint8_t> GpuBackend<Api>::export_heap() {
  throw_if_faulted();
  if (!heap_) throw Error(Errc::internal, "export_heap() before allocate_heap()");
  bind();
  typename Api::IpcHandle ipc;
  check(calls.ipc_get_handle(&ipc, heap_), "exporting the heap to the other ranks");
  HeapHandle handle;
  handle.backend = Api::name;
  handle.pci_bus_id = pci_bus_id(device_handle_);
  handle.bytes = heap_bytes_;
  static_assert(sizeof ipc == sizeof handle.ipc, "CUDA and HIP IPC handles are 64 bytes");
  std::memcpy(handle.ipc.data(), &ipc, sizeof ipc);
  return encode_heap_handle(handle);
}

template <class Api>
void* GpuBackend<Api>::import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& bytes_in,
                                        size_t bytes) {
  throw_if_faulted();
  // A process cannot open its own IPC handle; its own heap needs no mapping.
  if (peer == comm_.rank()) return heap_;
  if (auto known = peers_.find(peer); known != peers_.end()) return known->second;

  const HeapHandle handle = decode_heap_handle(bytes_in, Api::name, peer);
  check_peer_heap_size(handle, bytes, peer);
  const int ordinal = ordinal_of_bus(handle.pci_bus_id);
  if (ordinal < 0) throw_peer_gpu_not_visible(peer, handle.pci_bus_id, Api::visibility_variable);
  if (ordinal != peer_device) {
    log::write(log::Level::debug,
               format("%s: rank %d's GPU %d is GPU %d in this process", Api::name, peer, peer_device, ordinal));
  }
  bind();
  if (ordinal != device_) reach_peer_gpu(ordinal, peer);
  typename Api::IpcHandle ipc;
  std::memcpy(&ipc, handle.ipc.data(), sizeof ipc);
  void* base = nullptr;
  check(calls.ipc_open_handle(&base, ipc),
        format("opening rank %d's heap (GPU %d, PCI bus %s) through %s IPC (IPC reaches the ranks of one node)", peer,
               ordinal, handle.pci_bus_id.c_str(), Api::vendor_api));
  peers_[peer] = base;
  return base;
}

template <class Api>
void GpuBackend<Api>::release_heaps() {
  if (faults_.faulted()) {  // the context is unusable: the process ends and the driver frees everything
    peers_.clear();
    heap_ = nullptr;
    return;
  }
  if (peers_.empty() && !heap_) return;
  wait_stream("finishing device work before freeing the heap");
  std::string failures;
  for (const auto& [peer, base] : peers_) {
    const Returned closed = calls.ipc_close_handle(base);
    if (closed.status != Api::success) {
      failures += format("; closing rank %d's heap: %s returned %s", peer, closed.call,
                         calls.error_text(closed.status).c_str());
    }
  }
  peers_.clear();
  if (heap_) {
    const Returned freed = calls.mem_free(heap_);
    if (freed.status != Api::success) {
      failures += format("; freeing the heap: %s returned %s", freed.call, calls.error_text(freed.status).c_str());
    }
    heap_ = nullptr;
    heap_bytes_ = 0;
  }
  if (!failures.empty()) throw Error(Errc::internal, format("releasing the heaps on GPU %d", device_) + failures);
}

// --- mapped host memory ------------------------------------------------------------------------------

template <class Api>
MappedHostBuffer GpuBackend<Api>::allocate_mapped_host(size_t bytes) {
  throw_if_faulted();
  bind();
  void* host = nullptr;
  check(calls.host_alloc_mapped(&host, bytes), format("allocating %s of mapped host memory", human_bytes(bytes).c_str()));
  void* device = nullptr;
  const Returned mapped = calls.host_device_pointer(&device, host);
  if (mapped.status != Api::success) {
    (void)calls.host_free(host);  // the mapping error below is the one to report
    check(mapped, "mapping host memory into the GPU");
  }
  std::memset(host, 0, bytes);
  return MappedHostBuffer{host, device, bytes};
}

template <class Api>
void GpuBackend<Api>::free_mapped_host(MappedHostBuffer& buffer) {
  if (!buffer.host) return;
  if (mailbox_.host == buffer.host) mailbox_ = MappedHostBuffer{};
  // After a fault the pinned pages stay until the process ends, which is soon.
  if (!faults_.faulted()) {
    bind();
    check(calls.host_free(buffer.host), "freeing mapped host memory", Errc::internal);
  }
  buffer = MappedHostBuffer{};
}

// --- copies and fills ----------------------------------------------------------------------------------
// Each waits for the stream, so none runs while it is captured: refused before anything is enqueued.

// Backend::drain_before_copies says why.
template <class Api>
void GpuBackend<Api>::drain_for_proxy(const char* before) {
  if (!drain_before_copies_ || capturing_) return;
  wait_stream(format("finishing launched work before %s (a host proxy copies beside it)", before).c_str());
}

template <class Api>
void GpuBackend<Api>::copy(Returned enqueued, const std::string& what) {
  check(enqueued, what, Errc::invalid_argument);
  wait_stream(what.c_str());
}

template <class Api>
void GpuBackend<Api>::copy_to_host(void* host, const void* device, size_t bytes) {
  refuse_while_capturing("copying device memory to the host");
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  join_second();
  drain_for_proxy();
  copy(calls.copy_to_host(host, device, bytes, stream_),
       format("copying %s from GPU address %p to the host", human_bytes(bytes).c_str(), device));
}

template <class Api>
void GpuBackend<Api>::copy_from_host(void* device, const void* host, size_t bytes) {
  refuse_while_capturing("copying host memory to the device");
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  join_second();
  drain_for_proxy();
  copy(calls.copy_from_host(device, host, bytes, stream_),
       format("copying %s from the host to GPU address %p", human_bytes(bytes).c_str(), device));
}

// On the proxy's thread, beside the main thread's launches and waits: its own stream, so that neither
// waits for the other's work (a kernel in flight may be waiting for this copy), and a poll of that
// stream alone, without the main thread's interrupt and hang checks (the proxy answers device threads;
// a copy ends by itself unless the device faulted, which the query returns).
template <class Api>
void GpuBackend<Api>::proxy_copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  bind();
  if (proxy_stream_ == nullptr) check(calls.stream_create(&proxy_stream_), "creating the host proxy's stream");
  const std::string what = format("the host proxy copying %s from %p to %p", human_bytes(bytes).c_str(), src, dst);
  check(calls.copy_any(dst, src, bytes, proxy_stream_), what, Errc::internal);
  for (;;) {
    const Returned done = calls.stream_query(proxy_stream_);
    if (done.status != Api::not_ready) return check(done, what);
    std::this_thread::yield();
  }
}

// Peer heaps are mapped into this process (IPC), so a plain device-to-device copy reaches them through
// unified addressing and the copy engine takes the peer link; cuMemcpyPeerAsync would want the peer
// process's context, which this process does not have.
template <class Api>
void GpuBackend<Api>::copy_device(void* dst, const void* src, size_t bytes) {
  refuse_while_capturing("copying device memory");
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  join_second();
  drain_for_proxy();
  copy(calls.copy_device(dst, src, bytes, stream_),
       format("copying %s from GPU address %p to %p", human_bytes(bytes).c_str(), src, dst));
}

template <class Api>
void GpuBackend<Api>::copy_device_async(void* dst, const void* src, size_t bytes) {
  refuse_while_capturing("copying device memory with the copy engine");
  if (bytes == 0) return;
  throw_if_faulted();
  bind();
  check(calls.copy_device(dst, src, bytes, current_stream()),
        format("enqueueing a copy of %s from GPU address %p to %p", human_bytes(bytes).c_str(), src, dst),
        Errc::invalid_argument);
}

template <class Api>
void GpuBackend<Api>::fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) {
  refuse_while_capturing("filling device memory");
  if (count == 0) return;
  throw_if_faulted();
  bind();
  join_second();
  drain_for_proxy();
  const FillPlan plan = plan_fill(reinterpret_cast<uintptr_t>(device), pattern, pattern_bytes, count);
  const std::string what = format("filling %zu x %zu bytes at GPU address %p", count, pattern_bytes, device);
  switch (plan.method) {
    case FillMethod::memset8:
      copy(calls.memset8(device, static_cast<unsigned char>(plan.value), plan.elements, stream_), what);
      break;
    case FillMethod::memset16:
      copy(calls.memset16(device, static_cast<unsigned short>(plan.value), plan.elements, stream_), what);
      break;
    case FillMethod::memset32:
      copy(calls.memset32(device, plan.value, plan.elements, stream_), what);
      break;
    case FillMethod::doubling:
      fill_by_doubling(static_cast<char*>(device), pattern, pattern_bytes, count);
      break;
  }
}

template <class Api>
void GpuBackend<Api>::fill_by_doubling(char* dst, const void* pattern, size_t pattern_bytes, size_t count) {
  const std::vector<uint8_t> seed = fill_seed(pattern, pattern_bytes, count);
  check(calls.copy_from_host(dst, seed.data(), seed.size(), stream_), "seeding a fill pattern", Errc::invalid_argument);
  for (const CopyStep& step : doubling_copies(seed.size(), count * pattern_bytes)) {
    check(calls.copy_device(dst + step.dst_offset, dst + step.src_offset, step.bytes, stream_),
          "extending a fill pattern", Errc::invalid_argument);
  }
  wait_stream("filling GPU memory");  // before `seed` goes away
}

}  // namespace iris::runtime::gpu
