// Backend selection: iris.init{backend=} > IRIS_BACKEND > auto (NVIDIA GPU, else AMD GPU, else cpu).
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "runtime/backend.hpp"

namespace iris::runtime {

std::vector<std::string> backend_names() { return {"cuda", "hip", "cpu"}; }

std::unique_ptr<Backend> create_backend(const std::string& name, const comm::Comm&) {
  throw Error(Errc::environment, format("backend '%s' is not available in this version of iris-lua", name.c_str()));
}

}  // namespace iris::runtime
