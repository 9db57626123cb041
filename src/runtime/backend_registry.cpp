// The backends, in one table: their names, what each needs to be in the build, the heap a rank gets
// when nobody names a size, and the order auto tries them in.
#include <iterator>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "runtime/backend.hpp"
#include "runtime/cpu/cpu_backend.hpp"
#ifdef IRIS_HAVE_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#endif
#ifdef IRIS_HAVE_HIP
#include "runtime/hip/hip_backend.hpp"
#endif

namespace iris::runtime {
namespace {

std::unique_ptr<Backend> make_cpu_backend(const comm::Comm& comm) { return std::make_unique<CpuBackend>(comm); }

struct BackendKind {
  const char* name;
  std::unique_ptr<Backend> (*make)(const comm::Comm&);  // nullptr: not in this build
  const char* not_built;  // why not, and what to do
  size_t default_heap_bytes;
  bool tried_by_auto;  // auto tries these in table order, then falls back to the last entry
};

constexpr size_t kGpuHeapBytes = size_t(1) << 30;
constexpr size_t kCpuHeapBytes = size_t(256) << 20;  // shared memory (/dev/shm) is smaller than a GPU

const BackendKind kBackends[] = {
#ifdef IRIS_HAVE_CUDA
    {"cuda", make_cuda_backend, nullptr, kGpuHeapBytes, true},
#else
    {"cuda", nullptr,
     "configure found no CUDA toolkit headers (install the CUDA toolkit or set CUDA_HOME, then rebuild)",
     kGpuHeapBytes, true},
#endif
#ifdef IRIS_HAVE_HIP
    {"hip", make_hip_backend, nullptr, kGpuHeapBytes, true},
#else
    {"hip", nullptr, "configure found no HIP (install the Debian package libamdhip64-dev, then rebuild)",
     kGpuHeapBytes, true},
#endif
    {"cpu", make_cpu_backend, nullptr, kCpuHeapBytes, false},
};

const BackendKind* find(const std::string& name) {
  for (const BackendKind& kind : kBackends) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

std::unique_ptr<Backend> make(const BackendKind& kind, const comm::Comm& comm) {
  if (kind.make == nullptr) {
    throw Error(Errc::environment,
                format("backend '%s' is not in this build of iris-lua: %s", kind.name, kind.not_built));
  }
  return kind.make(comm);
}

}  // namespace

std::string backend_names() {
  std::string names;
  for (const BackendKind& kind : kBackends) names += std::string(kind.name) + ", ";
  return names.substr(0, names.size() - 2) + " or auto";
}

bool is_backend_name(const std::string& name) { return name == "auto" || find(name) != nullptr; }

size_t default_heap_bytes(const Backend& backend) { return find(backend.name())->default_heap_bytes; }

std::unique_ptr<Backend> create_backend(const std::string& name, const comm::Comm& comm) {
  if (name != "auto") {
    const BackendKind* kind = find(name);
    if (kind == nullptr) {
      throw Error(Errc::environment, format("unknown backend '%s': use %s", name.c_str(), backend_names().c_str()));
    }
    return make(*kind, comm);
  }
  std::string reasons;
  for (const BackendKind& kind : kBackends) {
    if (!kind.tried_by_auto) continue;
    try {
      return make(kind, comm);
    } catch (const Error& e) {
      reasons += format("\n  %s: %s", kind.name, e.what());
    }
  }
  const BackendKind& fallback = kBackends[std::size(kBackends) - 1];
  log::write(log::Level::info, format("backend auto: no GPU backend usable, running on %s", fallback.name) + reasons);
  return make(fallback, comm);
}

}  // namespace iris::runtime
