#include "runtime/cpu/cpu_execution.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "comm/comm.hpp"
#include "core/activity.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "iris/impl/abi.h"
#include "runtime/cpu/cpu_executor.hpp"
#include "runtime/fault_report.hpp"

namespace iris::runtime {
namespace {

// A path under which the dynamic loader opens descriptor `fd` and that it has never been given before
// in this process: it recognizes libraries by name, and a module it keeps loaded after dlclose (as it
// does for objects with unique symbols) must never be mistaken for a new one whose descriptor got the
// same number. "/proc/self/fd/N", then "/proc/self/fd/./N", "/proc/self/fd/././N", ...
std::string fresh_loader_path(int fd) {
  static std::mutex mutex;
  static std::map<int, int> uses;
  std::lock_guard<std::mutex> lock(mutex);
  std::string path = "/proc/self/fd/";
  for (int k = uses[fd]++; k > 0; --k) path += "./";
  return path + std::to_string(fd);
}

// A memory file holding `code`, which the loader can map executable.
int memory_file_with(const std::vector<uint8_t>& code) {
  int fd = -1;
#ifdef MFD_EXEC
  fd = memfd_create("iris-kernel-module", MFD_CLOEXEC | MFD_EXEC);  // kernels that seal memfds noexec by default
#endif
  if (fd < 0) fd = memfd_create("iris-kernel-module", MFD_CLOEXEC);
  if (fd < 0) throw Error(Errc::environment, format("cannot create a memory file for a kernel module: %s", std::strerror(errno)));
  size_t done = 0;
  while (done < code.size()) {
    const ssize_t n = write(fd, code.data() + done, code.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      throw Error(Errc::environment, format("writing a kernel module to memory: %s", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

// A kernel module: the shared object the host compiler built, loaded from an anonymous memory file
// (memfd) through /proc/self/fd: no file of a predictable name anywhere that another user could
// create first (a denial of service) or replace. The descriptor stays open while the module lives.
class CpuModule final : public Module {
 public:
  explicit CpuModule(const std::vector<uint8_t>& code) : fd_(memory_file_with(code)) {
    handle_ = dlopen(fresh_loader_path(fd_).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const std::string why = dlerror();
      close(fd_);
      throw Error(Errc::internal, "cannot load a kernel module: " + why);
    }
    using Bind = void (*)(const abi::CpuRuntime*);
    auto bind = reinterpret_cast<Bind>(dlsym(handle_, "__iris_cpu_bind"));
    if (bind == nullptr) {
      dlclose(handle_);
      close(fd_);
      throw Error(Errc::internal, "kernel module without __iris_cpu_bind: not built with the iris device header");
    }
    bind(cpu::Executor::runtime_table());
  }
  ~CpuModule() override {
    dlclose(handle_);
    close(fd_);
  }

  void* function(const std::string& symbol) override { return lookup(symbol); }

  void write_global(const std::string& symbol, const void* data, size_t bytes) override {
    std::memcpy(lookup(symbol), data, bytes);
  }

 private:
  void* lookup(const std::string& symbol) {
    void* p = dlsym(handle_, symbol.c_str());
    if (p == nullptr) throw Error(Errc::internal, "kernel module has no symbol " + symbol);
    return p;
  }
  int fd_;
  void* handle_ = nullptr;
};

// Launches have completed when launch() returns: the steady clock is the device's.
class CpuEvent final : public Event {
 public:
  void record() override { at_ = std::chrono::steady_clock::now(); }
  double elapsed_ms_since(Event& start) override {
    return std::chrono::duration<double, std::milli>(at_ - static_cast<CpuEvent&>(start).at_).count();
  }

 private:
  std::chrono::steady_clock::time_point at_ = std::chrono::steady_clock::now();
};

}  // namespace

int cpu_threads_per_rank(const comm::Comm& comm) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int share = std::max(1, static_cast<int>(cores) / std::max(1, comm.local_size()));
  return cpu_threads_from_environment(share);
}

int cpu_threads_from_environment(int fallback) {
  return static_cast<int>(env::whole_number(env::Var::cpu_threads, 1, 4096, static_cast<uint64_t>(fallback)));
}

uint64_t cpu_memory_seed_from_environment(uint64_t fallback) {
  return env::whole_number(env::Var::cpu_memory_seed, 0, UINT64_MAX, fallback);
}

CpuExecution::CpuExecution(const comm::Comm& c) : comm(c) {}
CpuExecution::~CpuExecution() = default;

uint64_t cpu_memory_seed(const comm::Comm& comm) {
  uint64_t random = std::random_device{}();
  random = (random << 32) ^ std::random_device{}();
  const uint64_t seed = cpu_memory_seed_from_environment(random);
  return seed ^ (0xbf58476d1ce4e5b9ull * static_cast<uint64_t>(comm.rank() + 1));
}

cpu::Executor& CpuExecution::executor() {
  if (!executor_) executor_ = std::make_unique<cpu::Executor>(cpu_threads_per_rank(comm), cpu_memory_seed(comm));
  return *executor_;
}

void CpuExecution::synchronize() {
  if (!fault_.empty()) throw Error(Errc::device_fault, fault_);
}

std::unique_ptr<Module> CpuExecution::load_module(const std::vector<uint8_t>& code) {
  return std::make_unique<CpuModule>(code);
}

void CpuExecution::launch(Module&, void* function, const LaunchConfig& config, void** args,
                          const std::string& kernel_label, const MappedHostBuffer& mailbox) {
  synchronize();  // a faulted device runs nothing more
  const activity::Scope running("running a kernel: " + kernel_label);  // what a hang report says of this rank
  const cpu::LaunchFault fault = executor().run(reinterpret_cast<cpu::KernelEntry>(function), args, config);
  if (!fault) return;
  if (fault.interrupted) stopped_by_interrupt(kernel_label);
  // A wait that gave up left its report in the mailbox: the same words every backend uses.
  const std::string report = describe_mailbox(mailbox);
  report_where_ranks_are(mailbox, report);
  const std::string what = report.empty() ? fault.what : report;
  fault_ = format("device fault in kernel %s on rank %d: %s%s", kernel_label.c_str(), comm.rank(), what.c_str(),
                  fault.where.c_str());
}

// Not a fault: the device stays usable. Lua raises "interrupted!" at the script's line (the host's
// hook); this error carries it where no hook runs.
void CpuExecution::stopped_by_interrupt(const std::string& what) {
  interrupt::clear();
  throw Error(Errc::interrupted, format("interrupted in kernel %s on rank %d", what.c_str(), comm.rank()));
}

std::unique_ptr<Event> CpuExecution::create_event() { return std::make_unique<CpuEvent>(); }

double CpuExecution::time_raw_launches(Module&, void* function, const LaunchConfig& config, void** args,
                                       int iterations) {
  cpu::Executor& e = executor();
  const auto entry = reinterpret_cast<cpu::KernelEntry>(function);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (e.run(entry, args, config).interrupted) stopped_by_interrupt("the raw-launch loop");
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace iris::runtime
