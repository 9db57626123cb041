// Backend selection: iris.init{backend=} > IRIS_BACKEND > auto (NVIDIA GPU, else AMD GPU, else cpu).
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

std::unique_ptr<Backend> make(const std::string& name, const comm::Comm& comm) {
  if (name == "cpu") return std::make_unique<CpuBackend>(comm);
  if (name == "cuda") {
#ifdef IRIS_HAVE_CUDA
    return make_cuda_backend(comm);
#else
    throw Error(Errc::environment,
                "backend 'cuda' is not in this build of iris-lua: configure found no CUDA toolkit headers "
                "(install the CUDA toolkit or set CUDA_HOME, then rebuild)");
#endif
  }
  if (name == "hip") {
#ifdef IRIS_HAVE_HIP
    return make_hip_backend(comm);
#else
    throw Error(Errc::environment,
                "backend 'hip' is not in this build of iris-lua: configure found no HIP "
                "(install the Debian package libamdhip64-dev, then rebuild)");
#endif
  }
  throw Error(Errc::environment, format("unknown backend '%s': use cuda, hip, cpu or auto", name.c_str()));
}

}  // namespace

std::unique_ptr<Backend> create_backend(const std::string& name, const comm::Comm& comm) {
  if (name != "auto") return make(name, comm);
  std::string reasons;
  for (const std::string& candidate : {std::string("cuda"), std::string("hip")}) {
    try {
      return make(candidate, comm);
    } catch (const Error& e) {
      reasons += format("\n  %s: %s", candidate.c_str(), e.what());
    }
  }
  log::write(log::Level::info, "backend auto: no GPU backend usable, running on cpu" + reasons);
  return make("cpu", comm);
}

}  // namespace iris::runtime
