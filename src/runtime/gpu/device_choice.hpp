// Which GPU a rank uses: its node-local rank modulo the devices it sees. More ranks than GPUs share
// them round-robin (4 ranks on 2 GPUs: 0,1,0,1), and the heap still works between ranks that share one
// (they import each other's heap through IPC like any other peer).
#pragma once

#include <string>

namespace iris::runtime::gpu {

// Throws Error(environment) when `device_count` < 1, naming `vendor` ("NVIDIA", "AMD") and the
// variable that hides devices (`visibility_variable`: CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES).
int device_for_local_rank(int local_rank, int device_count, const char* vendor, const char* visibility_variable);

// "CUDA_VISIBLE_DEVICES=0,1" or "CUDA_VISIBLE_DEVICES unset", for messages about what a rank sees.
std::string describe_visibility(const char* visibility_variable);

}  // namespace iris::runtime::gpu
