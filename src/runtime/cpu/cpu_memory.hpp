// The cpu backend's memory: the heap is a POSIX shared-memory segment per rank that every rank of the
// node maps (see cpu_backend.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backend.hpp"

namespace iris::runtime {

struct CpuMemory {
  explicit CpuMemory(const comm::Comm& comm);
  ~CpuMemory();

  void* allocate_heap(size_t bytes);
  std::vector<uint8_t> export_heap();
  void* import_peer_heap(int peer, const std::vector<uint8_t>& handle, size_t bytes);
  void peers_opened();
  void release_heaps();
  MappedHostBuffer allocate_mapped_host(size_t bytes);
  void free_mapped_host(MappedHostBuffer& buffer);

  const comm::Comm& comm;
};

}  // namespace iris::runtime
