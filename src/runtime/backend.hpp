// The one interface every backend implements: cpu/, cuda/, hip/ (one folder each, same shape).
//
// A backend owns one device for this rank: its memory (the symmetric heap and its peers' mappings),
// one in-order stream of work, compiled modules and launches. Everything above it (heap allocator,
// tensors, kernels) is written against this interface only.
//
// Ordering contract: every method that touches device memory runs after all work previously launched
// by this rank and has finished when it returns, except launch() and Graph::launch(), which are
// asynchronous. Faults of asynchronous work surface at the next synchronize() (or any method that
// waits) as Error(Errc::device_fault) naming the kernels in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace iris::comm {
class Comm;
}

namespace iris::runtime {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The largest launch a device takes, the one source of these numbers: the Lua side checks a launch's
// grid and block against them before anything reaches the backend (iris_launch_limits).
struct LaunchLimits {
  unsigned max_threads_per_block = 0;
  unsigned multiprocessors = 0;  // SMs, CUs, or the cpu backend's threads per rank: blocks that run at once
  unsigned max_block[3] = {0, 0, 0};
  unsigned max_grid[3] = {0, 0, 0};
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  size_t shared_bytes = 0;  // dynamic shared memory per block
  // May start while the kernel ahead of it on the stream still runs (CUDA's programmatic dependent
  // launch): only for kernels that wait for it on the device before touching memory (IRIS_EARLY_START,
  // device/iris/impl/platform.hpp). Set by the registry where Backend::early_start() says so.
  bool early_start = false;
};

// What a backend's kernels are compiled with and for.
struct CodeTarget {
  std::string compiler;  // "nvrtc", "hiprtc" or "cxx" (the host C++ compiler, cpu backend)
  std::string arch;      // "sm_90a", "gfx90a", "x86_64"
};

// Memory both the host and the device can address directly (CUDA/HIP: pinned and mapped). The device
// header reports failed waits into such a buffer, which stays readable after a device fault.
struct MappedHostBuffer {
  void* host = nullptr;
  void* device = nullptr;
  size_t bytes = 0;
};

// A TMA descriptor's matrix (Backend::encode_tensor_map): row-major, rows `row_stride` elements apart,
// of one dtype (IRIS_DTYPE_*), read and written in boxes of box_rows x box_cols with 128-byte swizzle.
struct TensorMapSpec {
  const void* base = nullptr;  // device address
  int dtype = 0;
  uint64_t rows = 0, cols = 0, row_stride = 0;
  uint32_t box_rows = 0, box_cols = 0;
};

// A loaded module (cubin, code object or shared object).
class Module {
 public:
  virtual ~Module() = default;
  // Handle for launch(); `symbol` is the lowered name the compiler reported. Throws if absent.
  virtual void* function(const std::string& symbol) = 0;
  // Writes a module-scope __device__ variable (the iris module state: rank, heap bases, mailbox).
  virtual void write_global(const std::string& symbol, const void* data, size_t bytes) = 0;
};

// A point on the stream, for device-timed intervals (iris.bench).
class Event {
 public:
  virtual ~Event() = default;
  virtual void record() = 0;
  // Milliseconds from `start` to this event; waits for this event.
  virtual double elapsed_ms_since(Event& start) = 0;
};

// Launches recorded by a capture (Backend::begin_capture), ready to run again: a CUDA or HIP graph
// instantiated, or the cpu backend's list of launches with copies of their arguments.
class Graph {
 public:
  // Releases it; a replay still running finishes first.
  virtual ~Graph() = default;
  // Runs every recorded launch, in order, `times` times; asynchronous like Backend::launch.
  virtual void launch(int64_t times) = 0;
  // The kernels it launches once (kernels others enqueued on the stream during the capture included).
  virtual size_t kernels() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;  // "cuda", "hip", "cpu"
  virtual int device() const = 0;        // device ordinal in use
  virtual std::string device_name() const = 0;
  virtual CodeTarget code_target() const = 0;
  // Whether launches may ask to start early (LaunchConfig::early_start): NVIDIA GPUs from sm_90.
  virtual bool early_start() const { return false; }
  virtual LaunchLimits launch_limits() const = 0;

  // --- symmetric heap ------------------------------------------------------------------------------
  // Allocates this rank's heap (once). Returns its base in this process.
  virtual void* allocate_heap(size_t bytes) = 0;
  // An opaque handle other ranks of the node can open; the same length on every rank.
  virtual std::vector<uint8_t> export_heap() = 0;
  // Maps `peer`'s heap into this process; returns its base here. `peer_device` is the ordinal the
  // peer uses (equal to device() when ranks share a device).
  virtual void* import_peer_heap(int peer, int peer_device, const std::vector<uint8_t>& handle, size_t bytes) = 0;
  // Called on every rank once every rank has opened every peer: nothing needs the exported handles any
  // more (the cpu backend closes the descriptor its peers opened its heap through).
  virtual void peers_opened() {}
  // Closes the peers' mappings and frees this rank's heap.
  virtual void release_heaps() = 0;

  // Host memory the device reads and writes too, zeroed.
  virtual MappedHostBuffer allocate_mapped_host(size_t bytes) = 0;
  virtual void free_mapped_host(MappedHostBuffer& buffer) = 0;
  // The mailbox device code reports failed waits into (an abi::DeviceMailbox at `mailbox.host`). The
  // Runtime hands it over once it has allocated it; a device fault's message then includes the report.
  void watch_mailbox(const MappedHostBuffer& mailbox) { mailbox_ = mailbox; }

  // --- memory operations (ordered after launched work; complete on return) --------------------------
  virtual void copy_to_host(void* host, const void* device, size_t bytes) = 0;
  virtual void copy_from_host(void* device, const void* host, size_t bytes) = 0;
  // Device to device, also between this rank's heap and a peer's mapped heap.
  virtual void copy_device(void* dst, const void* src, size_t bytes) = 0;
  // The same enqueued on the stream, ordered with the launches around it, not waited for (the copy
  // engine on GPUs: ctx.ccl's variant copy_engine orders it with kernels). Refused inside a capture.
  virtual void copy_device_async(void* dst, const void* src, size_t bytes) = 0;
  // Writes `count` copies of the `pattern_bytes`-long pattern (1, 2, 4 or 8 bytes) at `device`.
  virtual void fill(void* device, const void* pattern, size_t pattern_bytes, size_t count) = 0;
  // True when the host may dereference device pointers itself (cpu backend), after synchronize().
  virtual bool host_addressable() const = 0;
  // For the host proxy of a job over several nodes (session/proxy.hpp), from its own thread: copies
  // between any two of this rank's device memory and host memory, NOT ordered with launched work (a
  // kernel in flight may be waiting for exactly this copy), complete on return. GPUs: a stream of its
  // own; the cpu backend (host-addressable): memcpy.
  virtual void proxy_copy(void* dst, const void* src, size_t bytes);
  // With a proxy copying beside launched work: the main thread's copies and fills (above) are enqueued
  // only once the launched work is done. Enqueued behind a kernel that waits for the proxy, a copy
  // held back the proxy's own copies until the kernel gave up (2 x H200: a to_table() after kernels
  // waiting for a put across nodes; docs/decisions.md). Module loads too: cuModuleLoadDataEx waits for
  // kernels in flight, so a first send launched while the peer's recv module loaded stalled both
  // ranks' proxies until the kernels gave up (2 x H200 as 2 nodes, ccl_p2p). No-op on the cpu backend.
  virtual void drain_before_copies(bool on) { (void)on; }

  // Waits for all launched work; throws Error(device_fault) naming the kernels that were in flight.
  virtual void synchronize() = 0;
  // The kernels launched and not known to have finished, for a hang report: "put (x.lua:3) x2";
  // "" when none (launches on the cpu backend finish before launch() returns).
  virtual std::string kernels_in_flight() const { return ""; }
  // What tells this rank's device apart from the other ranks' ("0000:3b:00.0", a GPU's PCI bus id), ""
  // when ranks have no device to share (cpu). Ranks with the same identity share their device.
  virtual std::string device_identity() const { return ""; }
  // When several ranks share this rank's device: what goes slowly and what to do about it, said once
  // at iris.init ("" when sharing costs nothing, as under CUDA MPS; gpu/device_sharing.hpp).
  virtual std::string shared_device_advice() const { return ""; }

  // --- kernels -------------------------------------------------------------------------------------
  virtual std::unique_ptr<Module> load_module(const std::vector<uint8_t>& code) = 0;
  // Asynchronous. `args[i]` points at the i-th argument's value. `kernel_label` names the kernel in
  // fault messages ("put_ones (pattern.lua:12)").
  virtual void launch(Module& module, void* function, const LaunchConfig& config, void** args,
                      const std::string& kernel_label) = 0;
  virtual std::unique_ptr<Event> create_event() = 0;

  // --- references for benchmarks (docs/perf.md) ------------------------------------------------------
  // Launches `function` `iterations` times straight through the driver (no argument checks, no
  // bookkeeping), waits, and returns the seconds it took: what k:launch from Lua is measured against.
  // `device`: from the first launch's start to the last one's end (events; the device's pace when the
  // host issues faster); `host`: the host's own time to issue them, before the wait (the driver's cost
  // of a launch when the device keeps up). The cpu backend runs each launch to completion: both the same.
  struct RawLaunchTimes {
    double device = 0;
    double host = 0;
  };
  virtual RawLaunchTimes time_raw_launches(Module& module, void* function, const LaunchConfig& config, void** args,
                                           int iterations) = 0;
  // Encodes a TMA descriptor (iris::gemm::TensorMap, 128 bytes) of `spec` into `out` (64-byte aligned).
  // Only NVIDIA's Hopper and later have TMA: the others throw Error(unsupported) saying so.
  virtual void encode_tensor_map(const TensorMapSpec& spec, void* out) const;

  // The stream work is enqueued on now (see select_stream), as the vendor's libraries take it (CUstream,
  // hipStream_t), so a library called beside iris (NCCL, RCCL, cuBLAS) runs on the same stream; null on
  // the cpu backend.
  virtual void* native_stream() const { return nullptr; }

  // --- the second stream (ctx.ops's variant overlap; docs/architecture.md) ---------------------------
  // Launches, asynchronous copies and the vendor libraries' work (native_stream()) go to one of two
  // in-order streams: 0, the main one, or 1, a second one, from select_stream(which) on. stream_wait(
  // waiter) makes stream `waiter` wait, on the device (an event recorded on the other stream now, waited
  // for there), for everything enqueued on the other stream so far; no host wait. A fork is
  // stream_wait(1) then select_stream(1); a join is stream_wait(0) then select_stream(0). Both are legal
  // inside a capture: the second stream joins the capture at its first wait for the main one.
  // Every method that waits or runs on the main stream alone (copies, fills, synchronize(), timing
  // events, graph replays, the end of a capture) first joins the second stream's work into the main
  // stream, so the ordering contract above holds whichever stream was used. The cpu backend runs every
  // launch to completion before launch() returns: one order, nothing to do.
  virtual void select_stream(int which) { (void)which; }
  virtual void stream_wait(int waiter) { (void)waiter; }

  // --- graphs (ctx:capture; docs/graphs.md) -----------------------------------------------------------
  // From begin_capture() until end_capture() or abort_capture(), launches are recorded instead of run:
  // capture_launch() records one (args[i] points at arg_bytes[i] bytes, copied now, as a graph's
  // kernel node copies them). GPU backends capture their stream, so whatever else is enqueued on
  // native_stream() meanwhile (a vendor library's kernels) is recorded too. While capturing, every
  // method that waits for the device (copies, fills, synchronize(), time_raw_launches()) throws
  // Error(invalid_argument) instead: it would wait for work that does not run. Loading modules works.
  virtual void begin_capture() = 0;
  virtual void capture_launch(Module& module, void* function, const LaunchConfig& config, void** args,
                              const std::vector<size_t>& arg_bytes, const std::string& kernel_label) = 0;
  // The launches recorded since begin_capture(), ready to run (`label` names them in fault messages:
  // "the graph captured at pattern.lua:12").
  virtual std::unique_ptr<Graph> end_capture(const std::string& label) = 0;
  // Ends the capture and drops what it recorded: a capture that failed leaves nothing behind.
  virtual void abort_capture() = 0;
  bool capturing() const { return capturing_; }
  // Throws the error above when a capture is on; `what` names the operation ("copying to the host").
  void refuse_while_capturing(const char* what) const;

 protected:

  MappedHostBuffer mailbox_;  // see watch_mailbox(); host == nullptr until then
  bool capturing_ = false;    // between begin_capture() and end_capture() or abort_capture()
};

// Creates the named backend (backend_names()) for this rank: picks the device from the node-local rank
// modulo the device count. Throws Error(environment) saying why a backend is unusable (no driver, no
// device, not built in) and what to do. The backends are listed once, in backend_registry.cpp.
std::unique_ptr<Backend> create_backend(const std::string& name, const comm::Comm& comm);
// "cuda, hip, cpu or auto": the names create_backend takes, for messages.
std::string backend_names();
// Whether `name` is one of them (a backend of the table, built here or not, or auto).
bool is_backend_name(const std::string& name);
// The heap a rank of this backend gets when neither iris.init{heap_size=} nor IRIS_HEAP_SIZE names one.
size_t default_heap_bytes(const Backend& backend);

}  // namespace iris::runtime
