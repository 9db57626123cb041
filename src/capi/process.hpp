// Process-wide state behind the C boundary: the ranks (owned by the Host) and, once iris.init() ran,
// the runtime (backend, symmetric heap, kernels). One per process, as MPI and the device are.
#pragma once

namespace iris::comm {
class Comm;
}

namespace iris::capi {

// Called by the Host when it starts and before it ends.
void attach_comm(comm::Comm* comm);
comm::Comm& comm();

// Finishes device work and reports a pending device fault (throws iris::Error). Called before the
// ranks agree to end, so a fault is reported while every rank can still hear about it.
void synchronize_runtime();
// Releases the runtime: peers' heaps closed, own heap freed. Called after every rank has finished.
void shutdown_runtime();

}  // namespace iris::capi
