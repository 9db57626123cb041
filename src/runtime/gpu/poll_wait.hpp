// Waits for device work by polling the driver (cuStreamQuery, hipEventQuery, ...) rather than blocking
// in it, so Ctrl-C still ends a job whose kernel never finishes: a blocking synchronize would ignore the
// interrupt flag until the kernel ended. Spins first, so short waits return as fast as a blocking
// synchronize would, then yields, then sleeps a little between polls.
#pragma once

#include <chrono>
#include <thread>

#include "core/interrupt.hpp"

namespace iris::runtime::gpu {

// `done()` returns true once the work has finished and throws on errors. Throws Error(interrupted)
// on Ctrl-C, naming `what` ("waiting for the GPU").
template <class Done>
void poll_until(Done&& done, const char* what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  while (!done()) {
    interrupt::check(what);
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
