// Running a command (the host C++ compiler) so that it never outlives this process and leaves none of
// its files behind, however this process ends.
//
// A guardian process stands between this process and the command. It asks the kernel for SIGTERM when
// this process dies (PR_SET_PDEATHSIG: SIGKILL included), runs the command in a process group of its
// own and adopts whatever the command starts (a child subreaper: g++ runs cc1plus, as, ld). When this
// process dies, or gives up waiting (Ctrl-C, an error), the guardian kills the command's whole group,
// reaps every one of them and removes the scratch directory, then exits. The guardian is in a group of
// its own too, so the signal mpirun sends a rank's group reaches this process, not the guardian that
// must clean up after it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace iris::compiler {

struct GuardedCommand {
  std::vector<std::string> argv;         // argv[0]: the executable's path (no PATH search after fork)
  std::vector<std::string> environment;  // NAME=value entries replacing or adding to this process's
  std::string output_path;               // standard output and error go here
  std::string scratch_dir;               // a flat directory removed if the command is abandoned
};

// Runs `command` and returns its exit status (128 + the signal's number when a signal ended it).
// `poll` is called every few milliseconds while the command runs; when it throws (Ctrl-C), the
// command's group is killed and its scratch directory removed before the exception goes on.
// Throws Error(environment) when the command cannot be started.
int run_guarded(const GuardedCommand& command, const std::function<void()>& poll);

}  // namespace iris::compiler
