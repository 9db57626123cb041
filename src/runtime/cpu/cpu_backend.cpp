#include "runtime/cpu/cpu_backend.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>

#include "core/error.hpp"
#include "runtime/cpu/cpu_execution.hpp"
#include "runtime/cpu/cpu_memory.hpp"
#include "runtime/pattern_fill.hpp"

namespace iris::runtime {

CpuBackend::CpuBackend(const comm::Comm& comm)
    : memory_(std::make_unique<CpuMemory>(comm)), execution_(std::make_unique<CpuExecution>(comm)) {}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::device_name() const {
  return format("host CPU (%ld cores)", sysconf(_SC_NPROCESSORS_ONLN));
}

CodeTarget CpuBackend::code_target() const {
  struct utsname name;
  uname(&name);
  return CodeTarget{"cxx", name.machine};
}

LaunchLimits CpuBackend::launch_limits() const {
  // Those every GPU backend has (CUDA and HIP alike), so that a launch that runs here runs on a GPU.
  LaunchLimits limits;
  limits.max_threads_per_block = 1024;
  limits.max_block[0] = limits.max_block[1] = 1024;
  limits.max_block[2] = 64;
  limits.max_grid[0] = 2147483647u;
  limits.max_grid[1] = limits.max_grid[2] = 65535;
  limits.multiprocessors = static_cast<unsigned>(cpu_threads_per_rank(execution_->comm));
  return limits;
}

void* CpuBackend::allocate_heap(size_t bytes) { return memory_->allocate_heap(bytes); }
std::vector<uint8_t> CpuBackend::export_heap() { return memory_->export_heap(); }
void* CpuBackend::import_peer_heap(int peer, int, const std::vector<uint8_t>& handle, size_t bytes) {
  return memory_->import_peer_heap(peer, handle, bytes);
}
void CpuBackend::peers_opened() { memory_->peers_opened(); }
void CpuBackend::release_heaps() { memory_->release_heaps(); }
MappedHostBuffer CpuBackend::allocate_mapped_host(size_t bytes) { return memory_->allocate_mapped_host(bytes); }
void CpuBackend::free_mapped_host(MappedHostBuffer& buffer) { memory_->free_mapped_host(buffer); }

// The "device" is host memory and launches have completed when launch() returned: plain memory
// operations keep a stream's order. Like every method that waits, they report a kernel's fault.
void CpuBackend::copy_to_host(void* host, const void* device, size_t bytes) {
  refuse_while_capturing("copying device memory to the host");
  execution_->synchronize();
  std::memmove(host, device, bytes);
}
void CpuBackend::copy_from_host(void* device, const void* host, size_t bytes) {
  refuse_while_capturing("copying host memory to the device");
  execution_->synchronize();
  std::memmove(device, host, bytes);
}
void CpuBackend::copy_device(void* dst, const void* src, size_t bytes) {
  refuse_while_capturing("copying device memory");
  execution_->synchronize();
  std::memmove(dst, src, bytes);
}

// A launch runs to completion inside launch(): a copy made now is in stream order already.
void CpuBackend::copy_device_async(void* dst, const void* src, size_t bytes) {
  refuse_while_capturing("copying device memory with the copy engine");
  execution_->synchronize();
  std::memmove(dst, src, bytes);
}

void CpuBackend::fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) {
  refuse_while_capturing("filling device memory");
  execution_->synchronize();
  auto* out = static_cast<unsigned char*>(device);
  if (pattern_bytes == 1) {
    std::memset(out, *static_cast<const unsigned char*>(pattern), count);
    return;
  }
  if (count == 0) return;
  // The GPU backends' doubling (pattern_fill.hpp, plain host code): a seed, then copies of what is
  // already written; about ten times faster than one memcpy per element.
  const std::vector<uint8_t> seed = fill_seed(pattern, pattern_bytes, count);
  std::memcpy(out, seed.data(), seed.size());
  for (const CopyStep& step : doubling_copies(seed.size(), count * pattern_bytes)) {
    std::memcpy(out + step.dst_offset, out + step.src_offset, step.bytes);
  }
}

void CpuBackend::synchronize() {
  refuse_while_capturing("waiting for the device");
  execution_->synchronize();
}
std::unique_ptr<Module> CpuBackend::load_module(const std::vector<uint8_t>& code) { return execution_->load_module(code); }
void CpuBackend::launch(Module& module, void* function, const LaunchConfig& config, void** args,
                        const std::string& kernel_label) {
  // A capture needs the arguments' sizes to copy them (capture_launch); a plain launch would run now.
  if (capturing_) throw Error(Errc::internal, "launch of " + kernel_label + " while capturing: use capture_launch");
  execution_->launch(module, function, config, args, kernel_label, mailbox_);
}
std::unique_ptr<Event> CpuBackend::create_event() { return execution_->create_event(); }
Backend::RawLaunchTimes CpuBackend::time_raw_launches(Module& module, void* function, const LaunchConfig& config,
                                                      void** args, int iterations) {
  refuse_while_capturing("timing raw launches");
  const double seconds = execution_->time_raw_launches(module, function, config, args, iterations);
  return {seconds, seconds};
}

}  // namespace iris::runtime
