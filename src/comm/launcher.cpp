#include "comm/launcher.hpp"

#include <cstdlib>

namespace iris::comm {
namespace {

struct LauncherVariable {
  const char* name;
  bool is_rank;  // holds this process's rank in the job
};

// Open MPI, PMIx (srun, prrte), PMI (hydra, MPICH), MVAPICH.
constexpr LauncherVariable kLauncherVariables[] = {
    {"OMPI_COMM_WORLD_RANK", true}, {"OMPI_COMM_WORLD_SIZE", false}, {"PMIX_RANK", true},
    {"PMI_RANK", true},             {"PMI_SIZE", false},             {"MPI_LOCALNRANKS", false},
    {"MV2_COMM_WORLD_SIZE", false},
};

}  // namespace

bool started_by_launcher() {
  for (const LauncherVariable& v : kLauncherVariables) {
    if (std::getenv(v.name) != nullptr) return true;
  }
  return false;
}

bool launched_by_open_mpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

std::optional<int> launcher_rank() {
  for (const LauncherVariable& v : kLauncherVariables) {
    const char* value = v.is_rank ? std::getenv(v.name) : nullptr;
    if (value != nullptr) return std::atoi(value);
  }
  return std::nullopt;
}

}  // namespace iris::comm
