// What an MPI launcher (mpirun, srun, hydra) tells the processes it starts, read from the environment
// before MPI starts: whether one started this process, and which rank it is. The launchers' variables
// are listed once, in launcher.cpp.
#pragma once

#include <optional>

namespace iris::comm {

// True when a launcher started this process (then the ranks are MPI processes; alone, iris-lua is one
// rank and never touches MPI).
bool started_by_launcher();
// This process's rank as the launcher numbered it; nothing without a launcher.
std::optional<int> launcher_rank();
// True when Open MPI's launcher (mpirun, orterun) started this process: it ends the whole job when a
// rank exits with a non-zero code.
bool launched_by_open_mpi();

}  // namespace iris::comm
