#include "runtime/gpu/device_sharing.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <map>

#include "core/env.hpp"
#include "core/error.hpp"

namespace iris::runtime::gpu {

bool cuda_runs_processes_side_by_side(bool attribute_known, int attribute, bool control_pipe) {
  return attribute_known ? attribute != 0 : control_pipe;
}

std::string mps_control_pipe() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp/nvidia-mps") + "/control";
}

std::string mps_advice() {
  return "CUDA MPS is not running, so their kernels take turns on the GPU in time slices instead of running "
         "side by side: kernels that wait for another rank's kernel (flags, ctx:device_barrier(), message passing) "
         "crawl, or give up after IRIS_WAIT_TIMEOUT. Start MPS before the job, in the same shell:\n"
         "    export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps CUDA_MPS_LOG_DIRECTORY=/tmp/nvidia-mps-log\n"
         "    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY\n"
         "    nvidia-cuda-mps-control -d\n"
         "and stop it afterwards with: echo quit | nvidia-cuda-mps-control (docs/backends.md). Where ranks share "
         "the GPU on purpose, IRIS_SHARED_GPU_WARNING=0 silences this warning";
}

bool shared_device_warning_wanted() { return env::flag(env::Var::shared_gpu_warning, true); }

std::string shared_device_warning(const std::vector<std::string>& device_of_rank,
                                  const std::vector<std::string>& name_of_rank,
                                  const std::vector<std::string>& advice_of_rank) {
  std::map<std::string, std::vector<size_t>> ranks_of_device;
  for (size_t r = 0; r < device_of_rank.size(); ++r) {
    if (!device_of_rank[r].empty()) ranks_of_device[device_of_rank[r]].push_back(r);
  }
  std::string shared, advice;
  for (const auto& [device, ranks] : ranks_of_device) {
    if (ranks.size() < 2) continue;
    std::string who;
    for (size_t k = 0; k < ranks.size(); ++k) {
      who += (k == 0 ? "" : k + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[k]);
      if (advice.empty()) advice = advice_of_rank[ranks[k]];
    }
    shared += format("%sranks %s share GPU %s (%s)", shared.empty() ? "" : "; ", who.c_str(), device.c_str(),
                     name_of_rank[ranks[0]].c_str());
  }
  if (shared.empty() || advice.empty()) return "";
  return shared + ", and " + advice;
}

}  // namespace iris::runtime::gpu
