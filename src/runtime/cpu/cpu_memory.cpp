#include "runtime/cpu/cpu_memory.hpp"

#include "core/error.hpp"

namespace iris::runtime {

CpuMemory::CpuMemory(const comm::Comm& c) : comm(c) {}
CpuMemory::~CpuMemory() = default;

void* CpuMemory::allocate_heap(size_t) { throw Error(Errc::unsupported, "cpu heap not available yet"); }
std::vector<uint8_t> CpuMemory::export_heap() { throw Error(Errc::unsupported, "cpu heap not available yet"); }
void* CpuMemory::import_peer_heap(int, const std::vector<uint8_t>&, size_t) {
  throw Error(Errc::unsupported, "cpu heap not available yet");
}
void CpuMemory::peers_opened() {}
void CpuMemory::release_heaps() {}
MappedHostBuffer CpuMemory::allocate_mapped_host(size_t) { throw Error(Errc::unsupported, "cpu heap not available yet"); }
void CpuMemory::free_mapped_host(MappedHostBuffer&) {}

}  // namespace iris::runtime
