// Running a command (the host C++ compiler) so that it never outlives this process and none of its
// files stay behind, however this process ends.
//
// A guardian process owns the command's scratch directory for its whole life: it creates it, writes the
// input files, runs the command, and removes the directory once this process has read the results, or
// as soon as this process dies (the kernel sends it SIGTERM then: PR_SET_PDEATHSIG, SIGKILL included),
// gives up (Ctrl-C, an error) or ends early. It runs the command in a process group of its own and
// adopts whatever the command starts (a child subreaper: g++ runs cc1plus, as, ld), so it can kill and
// reap all of them first. The guardian is in a group of its own too, so the signal mpirun sends a rank's
// group reaches the rank, not the guardian that must clean up after it. Nothing exists before the
// guardian does, and it leaves only after the directory is gone.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace iris::compiler {

struct GuardedCommand {
  std::vector<std::string> argv;         // argv[0]: the executable's path (no PATH search after fork)
  std::vector<std::string> environment;  // NAME=value entries replacing or adding to this process's
  std::string scratch_dir;               // created (0700) for the command and removed with everything in it
  std::vector<std::pair<std::string, std::string>> files;  // written into it first: name, contents
  std::string output_name;               // the file in it that standard output and error go to
};

// Runs `command` and returns its exit status (128 + the signal's number when a signal ended it), after
// calling `read_results(scratch_dir)` while its files are still there. `poll(guardian)` is called every
// few milliseconds while the command runs, with the guardian's process id (the command and whatever it
// starts are its descendants); when it throws (Ctrl-C, a hang), the command's group is killed and the
// directory removed before the exception goes on. Throws Error(environment) when the command cannot be
// started.
int run_guarded(const GuardedCommand& command, const std::function<void(int guardian)>& poll,
                const std::function<void(const std::string& scratch_dir)>& read_results);

}  // namespace iris::compiler
