#include "host/repl_channel.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "comm/comm.hpp"
#include "comm/mpi_support.hpp"
#include "core/activity.hpp"
#include "core/error.hpp"

namespace iris::repl {
namespace {

using comm::Backoff;
using comm::check_mpi;

constexpr int kTagCommand = 1;
constexpr int kTagResult = 2;

struct HostAndPid {
  char host[256];
  int64_t pid;
};

}  // namespace

struct Channel::Mpi {
  MPI_Comm comm = MPI_COMM_NULL;

  void wait(MPI_Request* request) {
    Backoff backoff(std::chrono::milliseconds(2));
    for (;;) {
      int done = 0;
      check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      backoff.pause();
    }
  }

  std::string receive(int source, int tag, std::chrono::microseconds max_sleep) {
    Backoff backoff(max_sleep);
    MPI_Status status;
    for (;;) {
      int arrived = 0;
      check_mpi(MPI_Iprobe(source, tag, comm, &arrived, &status), "MPI_Iprobe");
      if (arrived) break;
      backoff.pause();
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    std::string text(static_cast<size_t>(bytes), '\0');
    check_mpi(MPI_Recv(text.data(), bytes, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    return text;
  }

  void send_all(const std::vector<int>& destinations, const std::string& text, int tag) {
    if (text.size() > static_cast<size_t>(INT32_MAX)) throw Error(Errc::invalid_argument, "REPL message over 2 GiB");
    std::vector<MPI_Request> requests(destinations.size());
    for (size_t k = 0; k < destinations.size(); ++k) {
      check_mpi(MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_BYTE, destinations[k], tag, comm, &requests[k]),
            "MPI_Isend");
    }
    for (auto& request : requests) wait(&request);
  }
};

Channel::Channel(comm::Comm& comm) {
  rank_ = comm.rank();
  size_ = comm.size();
  HostAndPid mine{};
  if (::gethostname(mine.host, sizeof mine.host - 1) != 0) std::snprintf(mine.host, sizeof mine.host, "?");
  mine.pid = ::getpid();
  std::vector<HostAndPid> all(size_);
  if (comm.is_mpi()) {
    mpi_ = std::make_unique<Mpi>();
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &mpi_->comm), "MPI_Comm_dup");
    check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, mpi_->comm), "MPI_Allgather");
  } else {
    all[0] = mine;
  }
  for (const auto& p : all) processes_.push_back({p.host, static_cast<pid_t>(p.pid)});
}

Channel::~Channel() {
  if (mpi_ && mpi_->comm != MPI_COMM_NULL) MPI_Comm_free(&mpi_->comm);
}

std::string Channel::share_command(const std::string& command) {
  if (!mpi_ || size_ == 1) return command;
  if (rank_ == 0) {
    std::vector<int> others;
    for (int r = 1; r < size_; ++r) others.push_back(r);
    mpi_->send_all(others, command, kTagCommand);
    return command;
  }
  // Waiting for the next line can take minutes: sleep up to 10 ms between looks.
  const activity::Scope idle("waiting for rank 0's next REPL command");  // for a hang report of the others
  return mpi_->receive(0, kTagCommand, std::chrono::milliseconds(10));
}

std::vector<std::string> Channel::gather_results(const std::string& mine) {
  if (!mpi_ || size_ == 1) return {mine};
  if (rank_ != 0) {
    mpi_->send_all({0}, mine, kTagResult);
    return {};
  }
  std::vector<std::string> all(size_);
  all[0] = mine;
  const activity::Scope collecting("waiting for every rank to finish the REPL command");
  for (int r = 1; r < size_; ++r) all[r] = mpi_->receive(r, kTagResult, std::chrono::milliseconds(2));
  return all;
}

}  // namespace iris::repl
