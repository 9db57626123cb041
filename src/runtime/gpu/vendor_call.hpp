// What a call into a vendor runtime returned, and which call it was.
//
// The code the cuda and hip backends share (gpu_backend.hpp) calls the vendor through a small adaptor
// per vendor (cuda/cuda_api.hpp, hip/hip_api.hpp). Each of its wrappers returns the status together
// with the vendor's name for the call, so an error reads "cuStreamQuery returned ..." or
// "hipStreamQuery returned ..." while the shared code names neither.
#pragma once

namespace iris::runtime::gpu {

template <class Status>
struct Returned {
  Status status;     // CUresult, hipError_t
  const char* call;  // "cuStreamQuery", "hipStreamQuery"
};

}  // namespace iris::runtime::gpu
