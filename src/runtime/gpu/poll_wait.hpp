// Waits for device work by polling the driver (cuStreamQuery, hipEventQuery, ...) rather than blocking
// in it, so Ctrl-C still ends a job whose kernel never finishes: a blocking synchronize would ignore the
// interrupt flag until the kernel ended. Spins first, so short waits return as fast as a blocking
// synchronize would, then yields, then sleeps a little between polls.
#pragma once

#include <chrono>
#include <thread>

#include "comm/hang_report.hpp"
#include "core/interrupt.hpp"

namespace iris::runtime::gpu {

// Polls `query()` (a wrapper of cuStreamQuery, hipEventQuery, ... returning gpu::Returned) while its
// status is `not_ready`, and returns the first other result: success, or the error the caller reports.
// Throws Error(interrupted) on Ctrl-C, naming `what` ("waiting for the GPU").
template <class Status, class Query>
auto poll_while(Status not_ready, Query&& query, const char* what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  comm::hang::Wait waiting(what);  // a kernel waiting for ranks that never come: the hang report says so
  for (;;) {
    const auto returned = query();
    if (returned.status != not_ready) return returned;
    interrupt::check(what);
    waiting.poll();
    const auto waited = Clock::now() - start;
    if (waited < std::chrono::microseconds(100)) continue;
    if (waited < std::chrono::milliseconds(10)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

}  // namespace iris::runtime::gpu
