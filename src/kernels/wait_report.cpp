#include "kernels/wait_report.hpp"

#include "core/error.hpp"

namespace iris::kernels {

std::string describe_wait_failure(const abi::DeviceMailbox& box, uint64_t heap_base) {
  static const char* const kSymbols[] = {"==", "!=", "<", "<=", ">", ">="};
  const char* symbol = box.comparison < 6 ? kSymbols[box.comparison] : "?";
  char what[sizeof(box.what) + 1] = {};
  for (size_t i = 0; i < sizeof(box.what) && box.what[i] != '\0'; ++i) what[i] = box.what[i];
  return format("%s timed out after %.1f s on rank %d: waited for *0x%llx (heap offset %lld) %s %lld, last value %lld",
                what, box.waited_seconds, box.rank, static_cast<unsigned long long>(box.address),
                static_cast<long long>(box.address - heap_base), symbol, static_cast<long long>(box.expected),
                static_cast<long long>(box.last_value));
}

}  // namespace iris::kernels
