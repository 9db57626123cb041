#include "runtime/cpu/cpu_memory.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/unnamed_memory.hpp"

namespace iris::runtime {
namespace {

// Fixed length, so every rank exports a handle of the same size (Backend::export_heap).
constexpr size_t kHandleBytes = 128;

// The heap's file lives in /dev/shm; its free space decides whether a heap fits.
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

CpuMemory::CpuMemory(const comm::Comm& c) : comm(c) {}

CpuMemory::~CpuMemory() { release_heaps(); }

void* CpuMemory::allocate_heap(size_t bytes) {
  if (own_.base != nullptr) throw Error(Errc::internal, "the cpu heap was allocated twice");
  auto no_room = [&](const std::string& reason) {
    return Error(Errc::environment,
                 format("cannot reserve %s of shared memory for rank %d's heap on the cpu backend: %s%s. "
                        "Ask for a smaller heap (iris.init{heap_size=...} or IRIS_HEAP_SIZE), run fewer ranks on this "
                        "node, or give /dev/shm more room (docker: --shm-size)",
                        human_bytes(bytes).c_str(), comm.rank(), reason.c_str(), shm_space_report().c_str()));
  };
  // Refuse what cannot fit before asking the kernel to reserve it page by page.
  ShmSpace space = shm_space();
  if (space.known && bytes > space.free_bytes) throw no_room("not enough free space");
  std::string why;
  own_fd_ = unnamed_memory::create(bytes, &why);
  if (own_fd_ < 0) throw no_room(why);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, own_fd_, 0);
  if (base == MAP_FAILED) {
    const int map_errno = errno;
    close_own_fd();
    throw Error(Errc::environment, format("cannot map rank %d's %s heap: %s", comm.rank(), human_bytes(bytes).c_str(),
                                          std::strerror(map_errno)));
  }
  own_ = Mapping{base, bytes};
  log::write(log::Level::debug, format("cpu heap: unnamed shared memory (pid %d, fd %d), %s", static_cast<int>(getpid()),
                                       own_fd_, human_bytes(bytes).c_str()));
  return base;
}

// The handle is "<pid> <fd>": where the peers find the heap's file.
std::vector<uint8_t> CpuMemory::export_heap() {
  const std::string text = format("%d %d", static_cast<int>(getpid()), own_fd_);
  std::vector<uint8_t> handle(kHandleBytes, 0);
  std::memcpy(handle.data(), text.data(), text.size());
  return handle;
}

void* CpuMemory::import_peer_heap(int peer, const std::vector<uint8_t>& handle, size_t bytes) {
  const std::string text(reinterpret_cast<const char*>(handle.data()),
                         strnlen(reinterpret_cast<const char*>(handle.data()), handle.size()));
  int pid = 0, peer_fd = -1;
  if (std::sscanf(text.c_str(), "%d %d", &pid, &peer_fd) != 2) {
    throw Error(Errc::internal, format("rank %d's heap handle '%s' is not a process and a descriptor", peer, text.c_str()));
  }
  std::string why;
  const int fd = unnamed_memory::open_peer(pid, peer_fd, &why);
  if (fd < 0) {
    throw Error(Errc::environment,
                format("cannot open rank %d's heap (descriptor %d of process %d): %s. The ranks of a node open each "
                       "other's heaps through /proc, which needs them to run as one user and be allowed to look at "
                       "each other (ptrace rules)",
                       peer, peer_fd, pid, why.c_str()));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    close(fd);
    throw Error(Errc::internal, format("rank %d's heap is smaller than %s", peer, human_bytes(bytes).c_str()));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (base == MAP_FAILED) {
    throw Error(Errc::environment, format("cannot map rank %d's heap: %s", peer, std::strerror(map_errno)));
  }
  peers_.push_back(Mapping{base, bytes});
  return base;
}

void CpuMemory::peers_opened() { close_own_fd(); }

void CpuMemory::release_heaps() {
  for (Mapping& peer : peers_) munmap(peer.base, peer.bytes);
  peers_.clear();
  if (own_.base != nullptr) munmap(own_.base, own_.bytes);
  own_ = Mapping{};
  close_own_fd();
}

void CpuMemory::close_own_fd() {
  if (own_fd_ < 0) return;
  close(own_fd_);
  own_fd_ = -1;
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
