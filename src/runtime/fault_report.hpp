// What a GPU backend says when device work fails: the kernels launched since the last
// synchronization (launches are asynchronous, so the driver reports a fault later, without saying
// which kernel caused it), the driver's error, and the report a failed device-side wait left in the
// mailbox (abi::DeviceMailbox, mapped host memory that stays readable after the fault).
//
// A device fault is sticky: the context is unusable afterwards. FaultState remembers the message and
// every later call fails with it at once, without touching the driver again; the host then ends the
// job on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "iris/impl/abi.h"
#include "runtime/backend.hpp"

namespace iris::runtime {

// Labels of the kernels launched since the last synchronization, with counts. Bounded: a loop of a
// million launches keeps a handful of distinct labels, not a million strings.
class KernelsInFlight {
 public:
  void launched(const std::string& label);
  void clear();
  bool empty() const { return total_ == 0; }
  // "put_ones (pattern.lua:12), check (x.lua:3) x3" or "none".
  std::string describe() const;

  static constexpr size_t kDistinctLabels = 8;

 private:
  std::vector<std::pair<std::string, uint64_t>> labels_;  // first seen first
  uint64_t total_ = 0;
  uint64_t others_ = 0;  // launches whose label did not fit
};

// "wait_until at ring.lua:14 on rank 1 gave up after 10.0 s: address 0x7f3a00001000 held 0, waited for a value >= 1
// (iris::Cmp::ge)",
// or "" when the mailbox holds no report.
std::string describe_mailbox(const abi::DeviceMailbox& mailbox);
// The same for the mailbox the Runtime allocated; "" also when there is none (yet).
std::string describe_mailbox(const MappedHostBuffer& mailbox);
// When the mailbox's report is a wait that gave up (a rank did not come: wait_until, the device barrier,
// a collective's arrival or completion; not a disagreement), has every rank of the node say where it is
// now (comm::hang::report_now), so the rank that did not come is named with its line. Returns at once
// otherwise.
void report_where_ranks_are(const MappedHostBuffer& mailbox, const std::string& report);

class FaultState {
 public:
  void launched(const std::string& label) { in_flight_.launched(label); }
  // The stream drained without error: nothing is in flight any more.
  void drained() { in_flight_.clear(); }

  bool faulted() const { return !message_.empty(); }
  // The kernels launched since the stream last drained, "" when none.
  std::string in_flight() const { return in_flight_.empty() ? "" : in_flight_.describe(); }
  // Throws the remembered Error(device_fault) when the device has faulted.
  void throw_if_faulted() const;

  // Records a fault and throws Error(device_fault): "device fault on GPU <device> (<device_name>):
  // <driver_error>, reported by <call>; kernels launched since the last synchronization: ...;
  // <mailbox report>; the GPU context is unusable now". `mailbox` is the watched mailbox (see
  // Backend::watch_mailbox), possibly empty.
  [[noreturn]] void raise(const std::string& driver_error, const char* call, int device,
                          const std::string& device_name, const MappedHostBuffer& mailbox);

 private:
  KernelsInFlight in_flight_;
  std::string message_;
};

}  // namespace iris::runtime
