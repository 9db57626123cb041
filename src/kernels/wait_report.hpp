// The text of a wait that gave up on the device (abi::DeviceMailbox), for fault messages.
#pragma once

#include <cstdint>
#include <string>

#include "iris/impl/abi.h"

namespace iris::kernels {

// "wait_until timed out after 10.0 s on rank 1: waited for *0x7f.. (heap offset 65536) == 1, last value 0"
// (the same words the cpu backend's device code writes). `heap_base`: where this rank's heap starts, to
// name the offset; 0 when unknown.
std::string describe_wait_failure(const abi::DeviceMailbox& box, uint64_t heap_base);

}  // namespace iris::kernels
