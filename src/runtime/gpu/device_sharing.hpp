// Several ranks on one GPU: the normal case on a laptop, a teaching machine or a one-GPU cloud
// instance. Without NVIDIA's Multi-Process Service (MPS) the kernels of different processes do not run
// side by side: the GPU switches between them in time slices, so kernels that wait for another rank's
// kernel (flags, ctx:device_barrier(), message passing) crawl, or give up after IRIS_WAIT_TIMEOUT. At
// iris.init every rank says which GPU it uses; rank 0 warns once, with the commands that start MPS.
#pragma once

#include <string>
#include <vector>

namespace iris::runtime::gpu {

// Whether the CUDA kernels of several processes on one GPU run side by side: the driver's
// CU_DEVICE_ATTRIBUTE_MPS_ENABLED when it knows it (`attribute_known`), else whether an MPS control
// daemon's pipe exists (`control_pipe`, see mps_control_pipe()).
bool cuda_runs_processes_side_by_side(bool attribute_known, int attribute, bool control_pipe);

// Where an MPS control daemon serving this process has its pipe: $CUDA_MPS_PIPE_DIRECTORY/control, by
// default /tmp/nvidia-mps/control.
std::string mps_control_pipe();

// What a cuda rank sharing its GPU without MPS is told: what crawls, and how to start (and stop) MPS.
std::string mps_advice();

// Whether the job wants that warning: IRIS_SHARED_GPU_WARNING=0 silences it for jobs (and test
// harnesses) that time-share a GPU on purpose. Throws Error(environment) for a value other than 0 or 1.
bool shared_device_warning_wanted();

// The warning for the whole job, or "" when no two ranks share a device. `device_of_rank[r]` tells
// rank r's device apart ("" for none: the cpu backend; a PCI bus id names a GPU only within a node,
// which is enough: iris.init refuses a job whose ranks are on several nodes before it asks), `name_of_rank[r]` names it, and
// `advice_of_rank[r]` is what sharing costs there ("" when nothing: MPS is running).
std::string shared_device_warning(const std::vector<std::string>& device_of_rank,
                                  const std::vector<std::string>& name_of_rank,
                                  const std::vector<std::string>& advice_of_rank);

}  // namespace iris::runtime::gpu
