// The cpu backend's memory: the heap is a POSIX shared-memory segment per rank that every rank of the
// node maps (see cpu_backend.hpp).
//
// Segment names are "/iris-<job id>-r<rank>": the job id is unique per job and equal on every rank,
// so jobs sharing a node never meet. The name exists only from allocate_heap() until peers_opened(),
// which unlinks it once every rank has mapped every peer: from then on the memory lives only in the
// mappings and disappears with the processes, however they end (even SIGKILL).
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
  void unlink_own_name();

  std::string own_name_;      // the segment's name while it has one
  bool own_name_linked_ = false;
  Mapping own_;
  std::vector<Mapping> peers_;
};

// "/iris-<job>-r<rank>": the shared-memory name of `rank`'s heap in job `job_id`.
std::string cpu_heap_segment_name(const std::string& job_id, int rank);

}  // namespace iris::runtime
