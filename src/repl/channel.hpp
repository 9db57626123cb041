// How the REPL's ranks talk: rank 0 sends each command to every rank and collects every rank's result.
//
// The channel has its own MPI communicator. A Ctrl-C can leave a user's collective half done on the
// host's communicator (comm/comm.hpp); the REPL's own messages never match with those leftovers, so
// the session goes on. Waits poll with a growing pause (ranks waiting for the next line use no CPU to
// speak of) and are never ended by Ctrl-C: the REPL decides what a Ctrl-C means (repl/interrupts.hpp).
// Without MPI (one rank, no launcher) everything is local.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace iris::comm {
class Comm;
}

namespace iris::repl {

struct RankProcess {
  std::string host;
  pid_t pid = 0;
};

class Channel {
 public:
  // Collective: every rank of `comm` opens the channel together.
  explicit Channel(comm::Comm& comm);
  // Collective too: every rank closes it together (at the end of the session).
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Host name and process id of every rank (index = rank).
  const std::vector<RankProcess>& processes() const { return processes_; }

  // Rank 0 passes the command and gets it back; the other ranks wait for it (their argument is unused).
  std::string share_command(const std::string& command);
  // Every rank passes its result; rank 0 gets every rank's (index = rank), the others an empty list.
  std::vector<std::string> gather_results(const std::string& mine);

 private:
  struct Mpi;
  std::unique_ptr<Mpi> mpi_;  // null without MPI
  int rank_ = 0;
  int size_ = 1;
  std::vector<RankProcess> processes_;
};

}  // namespace iris::repl
