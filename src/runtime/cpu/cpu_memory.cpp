#include "runtime/cpu/cpu_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace iris::runtime {
namespace {

// Fixed length, so every rank exports a handle of the same size (Backend::export_heap).
constexpr size_t kHandleBytes = 128;

// POSIX shared memory lives in /dev/shm on Linux; its free space decides whether a heap fits.
struct ShmSpace {
  bool known = false;  // false: no statvfs, or a tmpfs without a size limit
  unsigned long long free_bytes = 0, total = 0;
};

ShmSpace shm_space() {
  struct statvfs fs;
  ShmSpace space;
  if (statvfs("/dev/shm", &fs) != 0 || fs.f_blocks == 0) return space;
  space.known = true;
  space.free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  space.total = static_cast<unsigned long long>(fs.f_blocks) * fs.f_frsize;
  return space;
}

std::string shm_space_report() {
  ShmSpace space = shm_space();
  if (!space.known) return "";
  return format(" (/dev/shm has %s free of %s)", human_bytes(space.free_bytes).c_str(), human_bytes(space.total).c_str());
}

}  // namespace

std::string cpu_heap_segment_name(const std::string& job_id, int rank) {
  return format("/iris-%s-r%d", job_id.c_str(), rank);
}

CpuMemory::CpuMemory(const comm::Comm& c) : comm(c) {}

CpuMemory::~CpuMemory() { release_heaps(); }

void* CpuMemory::allocate_heap(size_t bytes) {
  if (own_.base != nullptr) throw Error(Errc::internal, "the cpu heap was allocated twice");
  own_name_ = cpu_heap_segment_name(comm.job_id(), comm.rank());
  auto no_room = [&](const char* reason) {
    return Error(Errc::environment,
                 format("cannot reserve %s of shared memory for rank %d's heap on the cpu backend: %s%s. "
                        "Ask for a smaller heap (iris.init{heap_size=...} or IRIS_HEAP_SIZE), run fewer ranks on this "
                        "node, or give /dev/shm more room (docker: --shm-size)",
                        human_bytes(bytes).c_str(), comm.rank(), reason, shm_space_report().c_str()));
  };
  // Refuse what cannot fit before asking the kernel to reserve it page by page.
  ShmSpace space = shm_space();
  if (space.known && bytes > space.free_bytes) throw no_room("not enough free space");
  int fd = shm_open(own_name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    throw Error(Errc::environment, format("cannot create the shared-memory segment %s for the cpu backend's heap: %s",
                                          own_name_.c_str(), std::strerror(errno)));
  }
  own_name_linked_ = true;
  // Reserve every page now: a segment that is only truncated to size gets its pages on first touch,
  // and a full /dev/shm then kills the process with SIGBUS in the middle of a write.
  int rc = ftruncate(fd, static_cast<off_t>(bytes));
  if (rc == 0) rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  else rc = errno;
  if (rc != 0) {
    close(fd);
    unlink_own_name();
    throw no_room(std::strerror(rc));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int map_errno = errno;
  close(fd);
  if (base == MAP_FAILED) {
    unlink_own_name();
    throw Error(Errc::environment, format("cannot map rank %d's %s heap: %s", comm.rank(), human_bytes(bytes).c_str(),
                                          std::strerror(map_errno)));
  }
  own_ = Mapping{base, bytes};
  log::write(log::Level::debug, format("cpu heap: shared-memory segment %s, %s", own_name_.c_str(), human_bytes(bytes).c_str()));
  return base;
}

std::vector<uint8_t> CpuMemory::export_heap() {
  if (own_name_.size() >= kHandleBytes) throw Error(Errc::internal, "shared-memory segment name too long: " + own_name_);
  std::vector<uint8_t> handle(kHandleBytes, 0);
  std::memcpy(handle.data(), own_name_.data(), own_name_.size());
  return handle;
}

void* CpuMemory::import_peer_heap(int peer, const std::vector<uint8_t>& handle, size_t bytes) {
  std::string name(reinterpret_cast<const char*>(handle.data()), strnlen(reinterpret_cast<const char*>(handle.data()), handle.size()));
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    throw Error(Errc::environment, format("cannot open rank %d's heap (shared-memory segment %s): %s", peer, name.c_str(),
                                          std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    close(fd);
    throw Error(Errc::internal, format("rank %d's heap segment %s is smaller than %s", peer, name.c_str(),
                                       human_bytes(bytes).c_str()));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int map_errno = errno;
  close(fd);
  if (base == MAP_FAILED) {
    throw Error(Errc::environment, format("cannot map rank %d's heap: %s", peer, std::strerror(map_errno)));
  }
  peers_.push_back(Mapping{base, bytes});
  return base;
}

void CpuMemory::peers_opened() { unlink_own_name(); }

void CpuMemory::release_heaps() {
  for (Mapping& peer : peers_) munmap(peer.base, peer.bytes);
  peers_.clear();
  if (own_.base != nullptr) munmap(own_.base, own_.bytes);
  own_ = Mapping{};
  unlink_own_name();
}

void CpuMemory::unlink_own_name() {
  if (!own_name_linked_) return;
  shm_unlink(own_name_.c_str());
  own_name_linked_ = false;
}

// The "device" is this process, so a mapped host buffer is ordinary memory seen the same from both.
MappedHostBuffer CpuMemory::allocate_mapped_host(size_t bytes) {
  void* memory = std::calloc(1, bytes == 0 ? 1 : bytes);
  if (memory == nullptr) throw Error(Errc::internal, format("out of host memory (%s)", human_bytes(bytes).c_str()));
  return MappedHostBuffer{memory, memory, bytes};
}

void CpuMemory::free_mapped_host(MappedHostBuffer& buffer) {
  std::free(buffer.host);
  buffer = MappedHostBuffer{};
}

}  // namespace iris::runtime
