// Small pieces every MPI user in iris-lua needs: turning an MPI status into an error, and the wait
// policy of polling loops.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace iris::comm {

// Throws Error(environment) "<call> failed: <MPI's text>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);

// Spins a little (among the ranks of one node a reply comes within microseconds), then sleeps longer
// and longer, up to `max_sleep`: idle ranks cost nothing, and an oversubscribed machine keeps its
// cores for the ranks that have work.
class Backoff {
 public:
  explicit Backoff(std::chrono::microseconds max_sleep = std::chrono::microseconds(1000)) : max_sleep_(max_sleep) {}
  void pause() {
    if (++spins_ < 200) return;
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, max_sleep_);
  }

 private:
  int spins_ = 0;
  std::chrono::microseconds sleep_{10};
  std::chrono::microseconds max_sleep_;
};

}  // namespace iris::comm
