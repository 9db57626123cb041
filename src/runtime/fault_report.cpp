#include "runtime/fault_report.hpp"

#include <cstring>

#include "comm/hang_report.hpp"
#include "core/error.hpp"

namespace iris::runtime {

void KernelsInFlight::launched(const std::string& label) {
  ++total_;
  // Launch loops repeat one label: check the last one first.
  if (!labels_.empty() && labels_.back().first == label) {
    ++labels_.back().second;
    return;
  }
  for (auto& entry : labels_) {
    if (entry.first == label) {
      ++entry.second;
      return;
    }
  }
  if (labels_.size() < kDistinctLabels) {
    labels_.emplace_back(label, 1);
  } else {
    ++others_;
  }
}

void KernelsInFlight::clear() {
  labels_.clear();
  total_ = 0;
  others_ = 0;
}

std::string KernelsInFlight::describe() const {
  if (total_ == 0) return "none";
  std::string text;
  for (const auto& [label, count] : labels_) {
    if (!text.empty()) text += ", ";
    text += label;
    if (count > 1) text += format(" x%llu", static_cast<unsigned long long>(count));
  }
  if (others_ > 0) text += format(" and %llu launches of other kernels", static_cast<unsigned long long>(others_));
  return text;
}

namespace {

// iris::Cmp's values (device/iris/iris.hpp) as the kernel wrote them: "iris::Cmp::ge", and the
// condition the wait was for: ">= 3".
struct Comparison {
  const char* name;
  const char* op;
};

Comparison comparison_of(uint32_t value) {
  static const Comparison kComparisons[] = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"},
                                            {"ge", ">="}};
  if (value < sizeof kComparisons / sizeof kComparisons[0]) return kComparisons[value];
  return {"?", "?"};
}

}  // namespace

std::string describe_mailbox(const abi::DeviceMailbox& mailbox) {
  if (mailbox.failed == 0) return "";
  if (mailbox.message[0] != '\0') return std::string(mailbox.message, strnlen(mailbox.message, sizeof mailbox.message));
  std::string what(mailbox.what, strnlen(mailbox.what, sizeof mailbox.what));
  if (what.empty()) what = "a device-side wait";
  const Comparison cmp = comparison_of(mailbox.comparison);
  return format("%s on rank %d gave up after %.1f s: address 0x%llx held %lld, waited for a value %s %lld "
                "(iris::Cmp::%s)",
                what.c_str(), mailbox.rank, mailbox.waited_seconds, static_cast<unsigned long long>(mailbox.address),
                static_cast<long long>(mailbox.last_value), cmp.op, static_cast<long long>(mailbox.expected), cmp.name);
}

std::string describe_mailbox(const MappedHostBuffer& mailbox) {
  if (mailbox.host == nullptr || mailbox.bytes < sizeof(abi::DeviceMailbox)) return "";
  return describe_mailbox(*static_cast<const abi::DeviceMailbox*>(mailbox.host));
}

void report_where_ranks_are(const MappedHostBuffer& mailbox, const std::string& report) {
  if (mailbox.host == nullptr || mailbox.bytes < sizeof(abi::DeviceMailbox)) return;
  const auto& box = *static_cast<const abi::DeviceMailbox*>(mailbox.host);
  if (box.failed != 0 && box.waited_seconds > 0) comm::hang::report_now(report);
}

void FaultState::throw_if_faulted() const {
  if (faulted()) throw Error(Errc::device_fault, message_);
}

void FaultState::raise(const std::string& driver_error, const char* call, int device, const std::string& device_name,
                       const MappedHostBuffer& mailbox) {
  if (faulted()) throw_if_faulted();
  message_ = format("device fault on GPU %d (%s): %s, reported by %s; kernels launched since the last "
                    "synchronization: %s",
                    device, device_name.c_str(), driver_error.c_str(), call, in_flight_.describe().c_str());
  const std::string report = describe_mailbox(mailbox);
  if (!report.empty()) message_ += "; " + report;
  report_where_ranks_are(mailbox, report);
  message_ += "; the GPU context is unusable now, the job ends";
  throw Error(Errc::device_fault, message_);
}

}  // namespace iris::runtime
