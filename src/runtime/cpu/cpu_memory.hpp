// The cpu backend's memory: the heap is shared memory per rank that every rank of the node maps (see
// cpu_backend.hpp).
//
// The memory never has a name: it is an unnamed file in /dev/shm (O_TMPFILE; memfd_create where the
// kernel has no O_TMPFILE for tmpfs), so its size still counts against /dev/shm's limit. A peer opens it
// through the owner's file descriptor, /proc/<pid>/fd/<fd> (pidfd_getfd where /proc refuses), which the
// owner keeps open until every rank has mapped every peer (peers_opened()). From its creation on, the
// memory lives only in open descriptors and mappings and disappears with the processes, however and
// whenever they end (SIGKILL during iris.init included): there is no name to leave behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

 private:
  struct Mapping {
    void* base = nullptr;
    size_t bytes = 0;
  };
  void close_own_fd();

  int own_fd_ = -1;  // the heap's file, open until every peer has opened it
  Mapping own_;
  std::vector<Mapping> peers_;
};

}  // namespace iris::runtime
