/* Data layouts shared by the host (C++ core) and device code (the iris device header, compiled by
 * NVRTC, hiprtc or the host C++ compiler). Plain C structs with fixed-width fields: the host fills them
 * and the device reads them, so their layout is part of the contract. Change them together with
 * IRIS_DEVICE_ABI_VERSION.
 */
#ifndef IRIS_IMPL_ABI_H
#define IRIS_IMPL_ABI_H

#define IRIS_DEVICE_ABI_VERSION 2

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
/* Run-time compilers have no <stdint.h>; the platform header defines the fixed-width types. */
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
namespace iris {
namespace abi {
#endif

/* iris::Context as a kernel receives it by value (the public type in iris.hpp has this layout). */
struct ContextData {
  const uint64_t* heap_bases; /* device pointer: world_size entries, where this rank sees each heap */
  int32_t rank;
  int32_t world_size;
};

/* Where a failed device-side wait reports before it traps. Host memory mapped into the device
 * (MappedHostBuffer), so the host can read it even after the fault poisoned the device context. */
struct DeviceMailbox {
  uint32_t failed;        /* 0, or 1 once a report is written (first writer wins) */
  int32_t rank;           /* rank whose kernel gave up */
  uint64_t address;       /* the address waited on */
  int64_t last_value;     /* last value seen there, as a signed 64-bit integer */
  int64_t expected;       /* the value compared against */
  uint32_t comparison;    /* iris::Cmp */
  uint32_t reserved;
  double waited_seconds;
  char what[64];          /* which call gave up: "wait_until", "device_barrier" */
  char message[256];      /* when not empty, the whole report, worded by the device code that failed
                             (ctx.ccl: "ctx.ccl.all_reduce: rank 0 called it with ..., rank 1 with ...") */
};

/* Where the collectives (ctx.ccl) keep their flags and counters: inside the heap's runtime scratch
 * region (src/heap/layout.hpp), after the device barrier's slots; zeroed at iris.init like the rest of
 * it. device/iris/impl/ccl_call.hpp lays it out. */
#define IRIS_CCL_STATE_OFFSET (40 * 1024)
#define IRIS_CCL_STATE_BYTES (24 * 1024)

/* Every compiled module has one module-scope variable of this type, named __iris_module_state, that
 * the host writes after loading the module. Device-side helpers that need no Context (wait_until's
 * report, the trap message) read it. */
struct ModuleState {
  const uint64_t* heap_bases;
  int32_t rank;
  int32_t world_size;
  struct DeviceMailbox* mailbox;
  int64_t wait_timeout_ns; /* budget of one wait_until spin (IRIS_WAIT_TIMEOUT) */
};

/* ---- cpu backend: how kernels built by the host compiler reach the executor ---------------------- */

struct CpuDim3 {
  uint32_t x, y, z;
};

/* One per device thread; stays at one address while that thread runs. */
struct CpuThreadState {
  struct CpuDim3 thread_idx, block_idx, block_dim, grid_dim;
  void* dynamic_shared; /* the block's dynamic shared memory (extern __shared__) */
};

/* Function table the executor hands each loaded cpu module through its exported
 * `extern "C" void __iris_cpu_bind(const iris::abi::CpuRuntime*)`. A table rather than exported host
 * symbols, so modules load the same way in iris-lua and in any program that embeds the host. */
struct CpuRuntime {
  uint32_t abi_version;
  struct CpuThreadState* (*current)(void); /* state of the device thread running now */
  void (*syncthreads)(void);               /* barrier among the threads of the current block */
  void (*yield)(void);                     /* a spinning device thread lets the others of its block run */
  void (*trap)(const char* reason);        /* ends the launch with a device fault; does not return */
};

#ifdef __cplusplus
} /* namespace abi */
} /* namespace iris */
#endif

#endif /* IRIS_IMPL_ABI_H */
