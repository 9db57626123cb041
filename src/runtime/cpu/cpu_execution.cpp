#include "runtime/cpu/cpu_execution.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "comm/comm.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "iris/impl/abi.h"
#include "runtime/cpu/cpu_executor.hpp"
#include "runtime/fault_report.hpp"

namespace iris::runtime {
namespace {

// A kernel module: the shared object the host compiler built. It is written to a file of a name never
// used before in this process, loaded, and the file removed at once (the mapping keeps the code): the
// dynamic loader recognizes libraries by name, and a module it keeps loaded after dlclose (as it does
// for objects with unique symbols) must never be mistaken for a new one.
class CpuModule final : public Module {
 public:
  explicit CpuModule(const std::vector<uint8_t>& code) {
    static std::atomic<unsigned> counter{0};
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
    const std::string path = format("%s/iris-lua-kernels-%ld-%u.so", dir.c_str(), static_cast<long>(getpid()),
                                    counter.fetch_add(1));
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (fd < 0) throw Error(Errc::environment, format("cannot write a kernel module to %s: %s", path.c_str(), std::strerror(errno)));
    size_t done = 0;
    while (done < code.size()) {
      const ssize_t n = write(fd, code.data() + done, code.size() - done);
      if (n < 0) {
        close(fd);
        unlink(path.c_str());
        throw Error(Errc::environment, format("writing a kernel module to %s: %s", path.c_str(), std::strerror(errno)));
      }
      done += static_cast<size_t>(n);
    }
    close(fd);
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    unlink(path.c_str());
    if (handle_ == nullptr) throw Error(Errc::internal, std::string("cannot load a kernel module: ") + dlerror());
    using Bind = void (*)(const abi::CpuRuntime*);
    auto bind = reinterpret_cast<Bind>(dlsym(handle_, "__iris_cpu_bind"));
    if (bind == nullptr) {
      dlclose(handle_);
      throw Error(Errc::internal, "kernel module without __iris_cpu_bind: not built with the iris device header");
    }
    bind(cpu::Executor::runtime_table());
  }
  ~CpuModule() override { dlclose(handle_); }

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
  if (auto text = env::get(env::Var::cpu_threads)) {
    char* end = nullptr;
    const long n = std::strtol(text->c_str(), &end, 10);
    if (end == text->c_str() || *end != '\0' || n < 1 || n > 4096) {
      throw Error(Errc::environment, "IRIS_CPU_THREADS must be a whole number from 1 to 4096, got '" + *text + "'");
    }
    return static_cast<int>(n);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, static_cast<int>(cores) / std::max(1, comm.local_size()));
}

CpuExecution::CpuExecution(const comm::Comm& c) : comm(c) {}
CpuExecution::~CpuExecution() = default;

uint64_t cpu_memory_seed(const comm::Comm& comm) {
  uint64_t seed = 0;
  if (auto text = env::get(env::Var::cpu_memory_seed)) {
    char* end = nullptr;
    errno = 0;
    seed = std::strtoull(text->c_str(), &end, 10);
    if (end == text->c_str() || *end != '\0' || errno != 0 || (*text)[0] == '-') {
      throw Error(Errc::environment, "IRIS_CPU_MEMORY_SEED must be a whole number from 0 to 2^64-1, got '" + *text + "'");
    }
  } else {
    seed = std::random_device{}();
    seed = (seed << 32) ^ std::random_device{}();
  }
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
  const cpu::LaunchFault fault = executor().run(reinterpret_cast<cpu::KernelEntry>(function), args, config);
  if (!fault) return;
  if (fault.interrupted) stopped_by_interrupt(kernel_label);
  // A wait that gave up left its report in the mailbox: the same words every backend uses.
  const std::string report = describe_mailbox(mailbox);
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
