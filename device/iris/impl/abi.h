/* Data layouts shared by the host (C++ core) and device code (the iris device header, compiled by
 * NVRTC, hiprtc or the host C++ compiler). Plain C structs with fixed-width fields: the host fills them
 * and the device reads them, so their layout is part of the contract. Change them together with
 * IRIS_DEVICE_ABI_VERSION.
 */
#ifndef IRIS_IMPL_ABI_H
#define IRIS_IMPL_ABI_H

#define IRIS_DEVICE_ABI_VERSION 4

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
/* Run-time compilers have no <stdint.h>; the platform header defines the fixed-width types. */
#else
#include <stdint.h>
#endif

/* ---- the codes and limits the Lua side, the host and the device share: one definition each --------
 * Limits are the enumerators below (iris.cdef declares them: Lua reads ffi.C.IRIS_MAX_RANKS). Codes
 * are the X-macro lists between the codes markers, one entry a line: the device and the host expand
 * them (the enums after them, impl/ccl_call.hpp's name tables, heap::ElementType's static_asserts), and
 * cmake/generate_cdef.cmake copies each into iris.cdef as a Lua table, which src/lua/iris/codes.lua
 * shapes. Codes travel as kernel arguments and in the collectives' call descriptors: an entry keeps its
 * number; a new one takes a new number. tests/unit/shared_codes_test.cpp compares both sides. */
/* cdef:begin */
enum {
  IRIS_MAX_RANKS = 64,          /* ranks of a ctx.ccl/ctx.ops call: the call state's slots per peer */
  IRIS_MAX_BLOCKS = 512,        /* blocks of a ctx.ccl/ctx.ops grid: the call state's progress slots */
  IRIS_MAX_THREADS = 1024,      /* threads of a block on every device iris supports */
  IRIS_CCL_LOCKS = 256,         /* spinlock all_reduce's locks, which tiles share by index */
  IRIS_CCL_UNIT_BYTES = 16,     /* a tile moves in units of 16 bytes (impl/ccl_fragment.hpp) */
  IRIS_CCL_TILE_ELEMENTS_GPU = 8,  /* elements of a tile a thread holds in registers, on GPUs */
  IRIS_CCL_TILE_ELEMENTS_CPU = 64, /* the same on the cpu backend (fewer, fuller threads cost less) */
  IRIS_GEMM_TILE = 128,         /* iris::gemm's block_m and block_n (gemm::kTileM, kTileN) */
  IRIS_GEMM_THREADS = 256,      /* threads of a block that multiplies (gemm::kThreads) */
  IRIS_GEMM_TMA_THREADS = 384,  /* the whole-kernel GEMM on Hopper's block (gemm::tma::kThreads) */
  IRIS_GEMM_TMA_TILE_M = 128,   /* its tile (gemm::tma::kTileM x kTileN) */
  IRIS_GEMM_TMA_TILE_N = 256,
  IRIS_GEMM_TMA_SHARED_BYTES = 230464, /* its dynamic shared memory (gemm::tma::Config<>::kSharedBytes) */
  /* Where the collectives (ctx.ccl) keep their flags and counters: inside the heap's runtime scratch
   * region (src/heap/layout.hpp), after the device barrier's slots; zeroed at iris.init like the rest
   * of it. device/iris/impl/ccl_call.hpp lays it out. */
  IRIS_CCL_STATE_OFFSET = 40 * 1024,
  IRIS_CCL_STATE_BYTES = 24 * 1024,
  /* The state's first two uint64: where the one-way staging is in every heap (its heap offset, 0 when
   * the heap has none) and the bytes of one of its slots; the host writes them at iris.init. */
  IRIS_CCL_STAGING_INFO_OFFSET = IRIS_CCL_STATE_OFFSET,
  /* Point to point (ctx.ccl.send/recv, impl/ccl_p2p.hpp) after the staging's slots: this rank's counters
   * (IRIS_CCL_P2P_STATE_BYTES), then IRIS_CCL_P2P_SLOTS slots of the staging's size per source rank. */
  IRIS_CCL_P2P_STATE_BYTES = 2048,
  IRIS_CCL_P2P_SLOTS = 2
};
/* cdef:end */

/* codes:begin */
/* Element types: X(name, code, bytes, kind), kind bool, int or float (docs/memory.md, "Dtypes"). */
#define IRIS_DTYPE_CODES(X) \
  X(bool, 0, 1, bool)       \
  X(int8, 1, 1, int)        \
  X(uint8, 2, 1, int)       \
  X(int16, 3, 2, int)       \
  X(int32, 4, 4, int)       \
  X(uint32, 5, 4, int)      \
  X(int64, 6, 8, int)       \
  X(uint64, 7, 8, int)      \
  X(float16, 8, 2, float)   \
  X(bfloat16, 9, 2, float)  \
  X(float32, 10, 4, float)  \
  X(float64, 11, 8, float)
/* Reductions of ctx.ccl and iris::ccl::Op: X(name, code, domain), domain any or int (integers and bool). */
#define IRIS_REDUCTION_CODES(X) \
  X(sum, 0, any)                \
  X(prod, 1, any)               \
  X(min, 2, any)                \
  X(max, 3, any)                \
  X(band, 4, int)               \
  X(bor, 5, int)                \
  X(bxor, 6, int)
/* Variants of the collectives and the fused ops: X(name, code). Which variants a collective has is its
 * line in IRIS_COLLECTIVE_CODES. */
#define IRIS_VARIANT_CODES(X) \
  X(one_shot, 0)              \
  X(two_shot, 1)              \
  X(ring, 2)                  \
  X(atomic, 3)                \
  X(spinlock, 4)              \
  X(persistent, 5)            \
  X(partitioned, 6)           \
  X(push, 7)                  \
  X(specialized, 8)           \
  X(pull, 9)                  \
  X(staged, 10)               \
  X(ll, 11)                   \
  X(ll_two_shot, 12)          \
  X(scatter_all_gather, 13)   \
  X(copy_engine, 14)         \
  X(relay, 15)
/* Collectives (ctx.ccl) and fused ops (ctx.ops): X(name, id, family, variants), family ccl or ops,
 * variants the names (IRIS_VARIANT_CODES) its `variant` option takes, the first the one its error
 * messages name first. A new collective is one line here (docs/architecture.md, "Where to add X"). */
#define IRIS_COLLECTIVE_CODES(X)                                          \
  X(all_reduce, 1, ccl, "one_shot two_shot ring atomic spinlock ll ll_two_shot") \
  X(all_gather, 2, ccl, "persistent partitioned ll copy_engine")          \
  X(reduce_scatter, 3, ccl, "two_shot ll")                                \
  X(all_to_all, 4, ccl, "push ll copy_engine")                            \
  X(broadcast, 5, ccl, "push ll relay scatter_all_gather copy_engine")    \
  X(matmul_all_reduce, 6, ops, "two_shot one_shot ring atomic spinlock specialized") \
  X(all_gather_matmul, 7, ops, "pull staged")                             \
  X(matmul_all_gather, 8, ops, "push specialized")                        \
  X(matmul_reduce_scatter, 9, ops, "two_shot specialized")               \
  X(reduce, 10, ccl, "one_shot two_shot ll")                              \
  X(gather, 11, ccl, "pull ll")                                           \
  X(scatter, 12, ccl, "pull ll")                                          \
  X(send, 13, ccl, "ll pull")                                             \
  X(recv, 14, ccl, "ll pull")
/* codes:end */

/* The codes as C enumerators: IRIS_DTYPE_float32, IRIS_REDUCTION_sum, IRIS_VARIANT_ring,
 * IRIS_COLLECTIVE_all_reduce; IRIS_FAMILY_ccl and IRIS_FAMILY_ops. */
#define IRIS_ABI_DTYPE_ENUMERATOR(name, code, bytes, kind) IRIS_DTYPE_##name = code,
#define IRIS_ABI_REDUCTION_ENUMERATOR(name, code, domain) IRIS_REDUCTION_##name = code,
#define IRIS_ABI_VARIANT_ENUMERATOR(name, code) IRIS_VARIANT_##name = code,
#define IRIS_ABI_COLLECTIVE_ENUMERATOR(name, id, family, variants) IRIS_COLLECTIVE_##name = id,
#define IRIS_ABI_COUNT(...) +1
enum iris_dtype_code { IRIS_DTYPE_CODES(IRIS_ABI_DTYPE_ENUMERATOR) IRIS_DTYPE_COUNT = 0 IRIS_DTYPE_CODES(IRIS_ABI_COUNT) };
enum iris_reduction_code {
  IRIS_REDUCTION_CODES(IRIS_ABI_REDUCTION_ENUMERATOR) IRIS_REDUCTION_COUNT = 0 IRIS_REDUCTION_CODES(IRIS_ABI_COUNT)
};
enum iris_variant_code { IRIS_VARIANT_CODES(IRIS_ABI_VARIANT_ENUMERATOR) IRIS_VARIANT_COUNT = 0 IRIS_VARIANT_CODES(IRIS_ABI_COUNT) };
enum iris_collective_code { IRIS_COLLECTIVE_CODES(IRIS_ABI_COLLECTIVE_ENUMERATOR) IRIS_COLLECTIVE_COUNT = 0 IRIS_COLLECTIVE_CODES(IRIS_ABI_COUNT) };
enum iris_collective_family { IRIS_FAMILY_ccl, IRIS_FAMILY_ops };

#ifdef __cplusplus
namespace iris {
namespace abi {
#endif

/* iris::Context as a kernel receives it by value: iris.hpp's Context derives from it, and the Lua side
 * fills it as iris_context_data, which iris.cdef declares from this very text (cmake/generate_cdef.cmake
 * reads the section between the cdef markers). */
/* cdef:begin */
typedef struct iris_context_data {
  const uint64_t* heap_bases; /* device pointer: world_size entries, where this rank sees each heap */
  int32_t rank;               /* the current rank */
  int32_t world_size;
} iris_context_data;
/* cdef:end */
#ifdef __cplusplus
typedef iris_context_data ContextData;
#endif

/* iris::gemm::TensorMap (gemm.hpp, "The whole-kernel GEMM on Hopper"): a TMA descriptor of a matrix, the
 * driver's CUtensorMap, 128 bytes on a 64-byte boundary. Kernels take it by value (`const
 * __grid_constant__ iris::gemm::TensorMap`, parameter kind IRIS_PARAM_TENSOR_MAP); the Lua side fills it
 * with iris_tensor_map_encode (the cuda backend's cuTensorMapEncodeTiled) and passes this cdata. */
/* cdef:begin */
typedef struct iris_tensor_map {
  uint64_t opaque[16];
} __attribute__((aligned(64))) iris_tensor_map;
/* cdef:end */
#ifdef __cplusplus
typedef iris_tensor_map TensorMapData;
#endif

/* Where a failed device-side wait reports before it traps. Host memory mapped into the device
 * (MappedHostBuffer), so the host can read it even after the fault poisoned the device context. */
struct DeviceMailbox {
  uint32_t failed;        /* 0; 1 once a thread claimed it (first wins), 2 once its report is written */
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

/* One event a kernel recorded with trace_begin/trace_end (docs/tracing.md). Timestamps are the device
 * clock (iris::detail::clock_ns: globaltimer on NVIDIA, the 100 MHz wall clock on AMD, CLOCK_MONOTONIC
 * on the cpu backend); the host puts them on its own clock when the trace stops. */
struct TraceRecord {
  uint64_t begin_ns;
  uint64_t end_ns;      /* 0 while the event is open (trace_end not reached) */
  uint64_t bytes;       /* what the caller said the event moves; 0 when it said nothing */
  uint32_t id;          /* iris::event::put, ..., or a user's number */
  uint32_t block;       /* linear index of the block that recorded it */
  int32_t target_rank;  /* -1 when the event has none */
  uint32_t unit;        /* the SM (NVIDIA) or CU (AMD) the block ran on; 0 on the cpu backend */
};

/* The named trace event ids (Iris's numbers): X(name, id). iris.hpp makes them iris::event::NAME, the
 * host names the events of a trace with them; any other id is the user's. */
#define IRIS_TRACE_EVENTS(X)                                                                         \
  X(load, 0) X(store, 1) X(get, 2) X(put, 3) X(copy, 4) X(atomic_add, 5) X(atomic_sub, 6)             \
  X(atomic_cas, 7) X(atomic_xchg, 8) X(atomic_xor, 9) X(atomic_and, 10) X(atomic_or, 11)             \
  X(atomic_min, 12) X(atomic_max, 13) X(fetch, 1024) X(compute, 2048) X(reduce, 2049) X(wait, 3072)   \
  X(barrier, 3073)

/* The rank's device trace buffer: this header, then `capacity` records, in the rank's own symmetric
 * heap. Kernels compiled while tracing is on (IRIS_TRACE_DEVICE defined) write into it; `next` counts
 * every event asked for, so next - capacity (when positive) is how many did not fit. */
struct TraceBuffer {
  uint32_t enabled;  /* 1 while iris.trace is on: modules compiled traced outlive a stop */
  uint32_t capacity;
  uint64_t next;
  uint64_t reserved[6];
};

/* ---- ranks on other nodes (docs/multinode.md) -------------------------------------------------------
 * The heap bases table holds, for a rank on another node, no address but IRIS_REMOTE_TAG | rank << 48:
 * translate() then yields tag | rank << 48 | offset, which carries the rank and the heap offset, and
 * which the device API recognises by its sign bit (one predictable branch on the node-local path). Such
 * an address is not dereferenceable: only the device API takes it, and sends the access through the
 * rank's host proxy. */
#define IRIS_REMOTE_TAG 0x8000000000000000ull
#define IRIS_REMOTE_RANK_SHIFT 48
#define IRIS_REMOTE_OFFSET_MASK 0x0000ffffffffffffull

/* What a device thread asks the host proxy (session/proxy.hpp) to do on another node's rank. */
#define IRIS_PROXY_LOAD 1      /* width bytes at (rank, offset) -> result */
#define IRIS_PROXY_STORE 2     /* width bytes of value -> (rank, offset) */
#define IRIS_PROXY_PUT 3       /* bytes from this process's address `local` -> (rank, offset) */
#define IRIS_PROXY_GET 4       /* bytes at (rank, offset) -> this process's address `local` */
#define IRIS_PROXY_ATOMIC 5    /* atomic `atomic` of `type` with value (and compare) -> result: the old value */
#define IRIS_PROXY_COPY 6      /* bytes at (value[0] = rank, value[1] = offset) -> (rank, offset): two ranks of other
                                  nodes, through the proxy's host memory */
/* Element types of atomics (and of loads and stores, by width). */
#define IRIS_PROXY_U8 0
#define IRIS_PROXY_U16 1
#define IRIS_PROXY_U32 2
#define IRIS_PROXY_U64 3
#define IRIS_PROXY_I32 4
#define IRIS_PROXY_I64 5
#define IRIS_PROXY_F32 6
#define IRIS_PROXY_F64 7
#define IRIS_PROXY_HALF 8
#define IRIS_PROXY_BFLOAT16 9
/* Atomic operations. */
#define IRIS_PROXY_ADD 0
#define IRIS_PROXY_XCHG 1
#define IRIS_PROXY_CAS 2
#define IRIS_PROXY_AND 3
#define IRIS_PROXY_OR 4
#define IRIS_PROXY_XOR 5
#define IRIS_PROXY_MIN 6
#define IRIS_PROXY_MAX 7
/* A slot's state, in `seq` (ticket t of a ring of capacity n): t free for the thread holding ticket t;
 * t + 1 posted; t + 2 done (result and status written by the proxy); the thread then reads the result
 * and frees the slot for ticket t + n. */
#define IRIS_PROXY_STATUS_OK 0
#define IRIS_PROXY_STATUS_OUTSIDE 1 /* the address lies outside the target's heap */
#define IRIS_PROXY_STATUS_FAILED 2  /* the transport failed: the host reports why and ends the job */

struct ProxySlot {
  uint64_t seq;
  uint32_t op;       /* IRIS_PROXY_LOAD ... */
  uint32_t type;     /* IRIS_PROXY_U8 ...: loads and stores by width, atomics by type */
  uint32_t atomic;   /* IRIS_PROXY_ADD ... */
  int32_t rank;      /* the target */
  uint64_t offset;   /* in the target's heap */
  uint64_t local;    /* PUT/GET: the address in this process */
  uint64_t bytes;    /* PUT/GET/COPY: how many; LOAD/STORE: the width (1, 2, 4, 8 or 16) */
  uint64_t value[2]; /* STORE and ATOMIC operands (the compare value of a CAS in value[1]); LOAD, ATOMIC: the result;
                        COPY: the source's rank and offset */
  uint32_t status;   /* IRIS_PROXY_STATUS_* */
  uint32_t reserved;
};

/* The ring a rank's device threads post into and its host proxy serves, in host-mapped memory. */
#define IRIS_PROXY_RING_SLOTS 1024
struct ProxyRing {
  uint64_t head;         /* tickets taken by device threads (atomic, system scope) */
  uint64_t reserved_head[7];
  uint64_t tail;         /* tickets the proxy has served */
  uint64_t reserved_tail[7];
  struct ProxySlot slots[IRIS_PROXY_RING_SLOTS];
};

/* Every compiled module has one module-scope variable of this type, named __iris_module_state, that
 * the host writes after loading the module. Device-side helpers that need no Context (wait_until's
 * report, the trap message) read it. */
struct ModuleState {
  const uint64_t* heap_bases;
  int32_t rank;
  int32_t world_size;
  struct DeviceMailbox* mailbox;
  int64_t wait_timeout_ns; /* budget of one wait_until spin (IRIS_WAIT_TIMEOUT) */
  struct TraceBuffer* trace; /* the rank's device trace buffer; null when no trace ever started */
  struct ProxyRing* proxy;   /* the host proxy's ring; null when every rank is on this rank's node */
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

/* A warp collective (shuffle, vote, __syncwarp) as a device thread hands it to the executor, which
 * parks the thread until every lane the mask names (and that has not exited) arrives. */
#define IRIS_CPU_WARP_SYNC 0      /* __syncwarp */
#define IRIS_CPU_WARP_SHFL_IDX 1  /* __shfl_sync: lane_arg is the source lane */
#define IRIS_CPU_WARP_SHFL_UP 2   /* __shfl_up_sync: lane_arg is the delta */
#define IRIS_CPU_WARP_SHFL_DOWN 3 /* __shfl_down_sync: lane_arg is the delta */
#define IRIS_CPU_WARP_SHFL_XOR 4  /* __shfl_xor_sync: lane_arg is the lane mask */
#define IRIS_CPU_WARP_BALLOT 5    /* value is the predicate */
#define IRIS_CPU_WARP_ANY 6
#define IRIS_CPU_WARP_ALL 7
#define IRIS_CPU_WARP_ACTIVE 8    /* __activemask (always with IRIS_CPU_WARP_IMPLICIT) */
/* Or'ed into `kind` by HIP's spellings without a mask (__shfl, __ballot, ...) and __activemask: the
 * lanes that take part are those that arrive together; the mask is ignored. */
#define IRIS_CPU_WARP_IMPLICIT 0x100

struct CpuWarpOp {
  uint32_t kind;   /* IRIS_CPU_WARP_* */
  uint32_t mask;   /* lanes named by the kernel (bit i: lane i) */
  uint64_t value;  /* the lane's value, as bits (shuffles), or its predicate (votes) */
  int32_t lane_arg;
  int32_t width;   /* shuffles: the segment width (warpSize when not given) */
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
  uint64_t (*warp)(const struct CpuWarpOp* op); /* a warp collective; returns the lane's result */
  /* The weak memory model (modules built with IRIS_CPU_WEAK_MEMORY; docs/backends.md). Per device
   * thread: its stores waiting in its store buffer, invisible to other threads. */
  void (*weak_copy)(void* dst, const void* src, uint64_t bytes, uint32_t buffered); /* reads src as this
      thread sees it (its buffered stores included); into the store buffer when `buffered`, else at once */
  void (*weak_commit)(const void* p, uint64_t bytes); /* makes this thread's stores to [p, p+bytes) visible */
  void (*weak_release)(void);                         /* makes all of this thread's stores visible */
};

#ifdef __cplusplus
} /* namespace abi */
} /* namespace iris */
#endif

#endif /* IRIS_IMPL_ABI_H */
