// What a GPU rank exports for its heap (Backend::export_heap): the vendor's 64-byte IPC handle plus
// what the importer checks before handing it to the driver: that it comes from the same backend, the
// heap's size, and the exporter's GPU by PCI bus id (device ordinals differ between processes whose
// CUDA_VISIBLE_DEVICES differ; the bus id does not).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace iris::runtime::gpu {

struct HeapHandle {
  std::string backend;     // "cuda" or "hip"
  std::string pci_bus_id;  // "0000:3b:00.0"
  uint64_t bytes = 0;
  std::array<uint8_t, 64> ipc{};  // CUipcMemHandle / hipIpcMemHandle_t
};

// A fixed length (the same on every rank, as export_heap promises).
std::vector<uint8_t> encode_heap_handle(const HeapHandle& handle);

// Throws Error(environment) naming `peer` when `bytes` is not a heap handle of `expected_backend`.
HeapHandle decode_heap_handle(const std::vector<uint8_t>& bytes, const char* expected_backend, int peer);

// The importer's checks and refusals, worded the same on every GPU backend.
void check_peer_heap_size(const HeapHandle& handle, size_t expected_bytes, int peer);
[[noreturn]] void throw_peer_gpu_not_visible(int peer, const std::string& pci_bus_id, const char* visibility_variable);
[[noreturn]] void throw_no_peer_path(int device, const std::string& device_name, int peer_device, int peer,
                                     const char* probe_call);

}  // namespace iris::runtime::gpu
