// The iris device API: remote loads, stores and atomics on the symmetric heap of any rank.
//
// One source for every platform: NVRTC (NVIDIA), hiprtc (AMD) and the host C++ compiler (the cpu
// backend). iris-lua includes this header before every kernel snippet; a snippet never includes it
// itself. This file is the documentation: declarations and their contracts. Bodies live in impl/.
//
// ---- Pointers and ranks ---------------------------------------------------------------------------
// Every rank has a symmetric heap; a tensor has the same offset in every rank's heap. `hb` (heap
// bases) is a device array of world_size addresses: hb[r] is where the CURRENT rank sees rank r's heap.
// A pointer a kernel receives is in the current rank's address space; translate() moves it into
// another rank's heap (same offset). Rank arguments follow Iris: the first rank names the address
// space the pointer is in (the current rank), the second the remote one.
//
// ---- Memory order ---------------------------------------------------------------------------------
// load/store/get/put/copy and the *_block copies are plain (weak) accesses: they are ordered against
// other ranks only through an atomic or a signal with release/acquire semantics. Atomics take a
// semantic (`sem`) and a scope; the defaults are acq_rel and sys (Iris defaults to gpu scope, and
// cross-GPU flags then hang). The mapping onto each platform:
//
//   iris            | CUDA (inline PTX, sm_70+)          | HIP (clang builtins)                      | cpu backend
//   ----------------+------------------------------------+-------------------------------------------+------------------------
//   relaxed         | atom.relaxed / ld,st.relaxed       | __ATOMIC_RELAXED                          | __ATOMIC_RELAXED
//   acquire         | atom.acquire / ld.acquire          | __ATOMIC_ACQUIRE                          | __ATOMIC_ACQUIRE
//   release         | atom.release / st.release          | __ATOMIC_RELEASE                          | __ATOMIC_RELEASE
//   acq_rel         | atom.acq_rel (loads: ld.acquire,   | __ATOMIC_ACQ_REL (loads acquire, stores   | __ATOMIC_ACQ_REL (same
//                   |   stores: st.release)              |   release)                                |   narrowing as HIP)
//   scope block     | .cta                               | __HIP_MEMORY_SCOPE_WORKGROUP              | (all scopes coherent:
//   scope gpu       | .gpu                               | __HIP_MEMORY_SCOPE_AGENT                  |  ranks are processes
//   scope sys       | .sys                               | __HIP_MEMORY_SCOPE_SYSTEM                 |  sharing memory)
//   fence(sem, sc)  | fence.acq_rel.<scope>              | __builtin_amdgcn_fence(order, "workgroup" | __atomic_thread_fence
//                   |   (relaxed: no fence)              |   / "agent" / "")                         |
//
// A release by one thread after __syncthreads() publishes the writes of its whole block (the barrier
// orders them before the release; PTX and the HSA model make this cumulative), which is how a block
// hands a *_block copy to another rank: copy, __syncthreads(), one thread signals.
//
// The cpu backend's host keeps stores in order, which hides a missing release; with
// IRIS_CPU_MEMORY_MODEL=weak it holds this API's stores to other ranks' heaps in per-thread store
// buffers until a release, a barrier, a random moment or (late) the kernel's end, so such a bug fails
// there too (docs/backends.md says what is modelled and what is not).
//
// ---- Types ----------------------------------------------------------------------------------------
// iris::half and iris::bfloat16 name the 16-bit float types on every platform (CUDA __half and
// __nv_bfloat16; HIP __half and, where HIP has none (HIP < 6), iris's own bfloat16; cpu: iris's own
// software types). int8_t ... uint64_t, size_t and bool are available everywhere.
//
// ---- Platform notes -------------------------------------------------------------------------------
// Snippets are HIP C++. threadIdx/blockIdx/blockDim/gridDim, __syncthreads(), __shared__ and
// extern __shared__ (dynamic shared memory), atomicAdd-style builtins and the HIP spellings
// hipThreadIdx_x, hipBlockIdx_x, hipBlockDim_x, hipGridDim_x (and _y, _z), HIP_DYNAMIC_SHARED work on
// every platform. So do warp-level operations in both spellings: CUDA's __shfl_sync, __shfl_up_sync,
// __shfl_down_sync, __shfl_xor_sync, __ballot_sync, __any_sync, __all_sync, __activemask, __syncwarp
// (HIP gets them from impl/warp_gpu.hpp) and HIP's __shfl, __shfl_up, __shfl_down, __shfl_xor,
// __ballot (64 bits wide), __any, __all, __lane_id (CUDA gets them there too). warpSize is 32 on
// NVIDIA and on the cpu backend, which emulates NVIDIA's warps whatever the spelling (the same snippet
// on an AMD GPU has 64-lane warps). On the cpu backend a collective parks its thread until the lanes
// its mask names arrive or exit; misuse (a lane outside its own mask, lanes disagreeing, a collective
// that can never complete) is a device fault naming it, and __match_*, __reduce_*_sync and
// __syncthreads_count/and/or are compile errors.
#ifndef IRIS_IRIS_HPP
#define IRIS_IRIS_HPP

#include "impl/platform.hpp"

namespace iris {

// Memory-order semantic of an atomic (see the table above).
enum Semantic : int { relaxed = 0, acquire = 1, release = 2, acq_rel = 3 };
// Which threads an atomic is coherent with: the block, the whole device, or the system (other GPUs
// and the host; what anything another rank reads needs).
enum Scope : int { block = 0, gpu = 1, sys = 2 };
// Comparisons for wait_until.
enum class Cmp : int { eq = 0, ne = 1, lt = 2, le = 3, gt = 4, ge = 5 };

// The type of a value written through a T* (store, the atomics, signals, wait_until's value): T, taken
// from the pointer alone, so that ctx.atomic_add(flag, 1, r) on a uint64_t* adds a uint64_t 1 instead of
// failing to deduce T from both the pointer and the literal.
template <class T> struct ValueOf { typedef T type; };
template <class T> using value_of = typename ValueOf<T>::type;

// ---- Pointer translation and plain remote accesses -------------------------------------------------

// hb[to_rank] + (p - hb[from_rank]): where rank `to_rank`'s copy of *p is, seen from this rank.
template <class T>
IRIS_DEVICE T* translate(T* p, int from_rank, int to_rank, const uint64_t* hb);

// Reads *p as it is in `from_rank`'s heap. `to_rank` is the current rank (p is in its address space).
template <class T>
IRIS_DEVICE T load(const T* p, int to_rank, int from_rank, const uint64_t* hb);

// Writes v to *p in `to_rank`'s heap. `from_rank` is the current rank.
template <class T>
IRIS_DEVICE void store(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb);

// Reads *from_p in `to_rank`'s heap and writes it to the local *to_p (`from_rank` is the current
// rank; Iris's code, not its docstring).
template <class T>
IRIS_DEVICE void get(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb);

// Reads the local *from_p and writes it to *to_p in `to_rank`'s heap (`from_rank` is the current rank).
template <class T>
IRIS_DEVICE void put(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb);

// Reads *src in `from_rank`'s heap and writes *dst in `to_rank`'s heap; both pointers are in the
// current rank's (`cur_rank`) address space, and one of from_rank/to_rank is cur_rank.
template <class T>
IRIS_DEVICE void copy(const T* src, T* dst, int from_rank, int to_rank, int cur_rank, const uint64_t* hb);

// ---- Atomics on any rank's heap -----------------------------------------------------------------
// Each translates p from `from_rank` (current) to `to_rank`, performs the operation with `sem` at
// `scope`, and returns the value *p held before. Types: add/sub/xchg/min/max/cas take int32, uint32,
// int64, uint64, float and double; add/sub also iris::half and iris::bfloat16; and/or/xor take the
// integer types only. Another type is a compile error naming the operation and the supported types.
template <class T>
IRIS_DEVICE T atomic_add(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_sub(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_xchg(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                          Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_xor(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_and(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_or(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                        Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_min(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
template <class T>
IRIS_DEVICE T atomic_max(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);
// Writes v if *p == cmp (compared bit for bit); returns the old value either way.
template <class T>
IRIS_DEVICE T atomic_cas(T* p, value_of<T> cmp, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem = acq_rel,
                         Scope scope = sys);

// A fence of `sem` at `scope` (relaxed: none).
IRIS_DEVICE void fence(Semantic sem = acq_rel, Scope scope = sys);

// ---- Flags: signals and bounded waits (beyond Iris) -------------------------------------------------
// A signal is how one rank tells another "the data before this is there": a release at system scope,
// so every write this thread made (and, after __syncthreads(), its block made) before the signal is
// visible to whoever acquires the flag. Flag types: int32, uint32, int64, uint64.

// Atomically writes v to *p in `to_rank`'s heap (release, sys).
template <class T>
IRIS_DEVICE void signal_set(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb);
// Atomically adds v to *p in `to_rank`'s heap (release, sys); returns the old value.
template <class T>
IRIS_DEVICE T signal_add(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb);

// Spins until `*p cmp value` holds for the local *p, reading it with `sem` (acquire or relaxed) at
// `scope`, and returns the value that satisfied it. The spin is bounded: after IRIS_WAIT_TIMEOUT
// seconds (the module state's budget) it writes the rank, the address, the last value seen and the
// expected value into the job's mailbox and traps, so the host reports a hang as an error instead
// of hanging. On the cpu backend the spinning thread lets the other threads of its block run. The
// report names the call's line (`file` and `line` default to the caller's, through __builtin_FILE and
// __builtin_LINE; a snippet's lines are its script's): "wait_until at ring.lua:14 on rank 1 gave up".
template <class T>
IRIS_DEVICE T wait_until(const T* p, Cmp cmp, value_of<T> value, Semantic sem = acquire, Scope scope = sys,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE());

// ---- Block-cooperative bulk copies (beyond Iris) -----------------------------------------------------
// Every thread of the block calls them with the same arguments; together they move `count` elements
// with 16-byte accesses where source and destination are equally aligned (element-wise for the
// unaligned head and tail, or throughout when the two are aligned differently). Plain accesses:
// publish the result with __syncthreads() and a signal. They do not synchronize the block.

// Local src -> dst in `to_rank`'s heap.
template <class T>
IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb);
// src in `to_rank`'s heap -> local dst (as get(): from_rank is the current rank).
template <class T>
IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb);
// src in `from_rank`'s heap -> dst in `to_rank`'s heap; pointers in `cur_rank`'s address space.
template <class T>
IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, int cur_rank,
                            const uint64_t* hb);

// The same three staged through shared memory the block lends them: on NVIDIA sm_90 and newer the SM's
// bulk-copy unit (cp.async.bulk) moves the data in kilobyte pieces that stay in flight without the
// threads, so a few blocks reach the bandwidth the plain forms need many for (docs/perf.md, "Copies from
// a few SMs"); elsewhere, or where source and destination are not equally 16-byte aligned, the plain
// form's loop. `staging` is at least 384 bytes of this block's shared memory, 16-byte aligned (128 is
// better); 16 KiB to 64 KiB is the useful range. Unlike the plain forms they synchronize the block on
// entry and on exit, and the copy is written when any thread returns (one thread may signal at once):
//   __shared__ __align__(128) unsigned char buf[32768];
//   ctx.put_block(src, dst, n, peer, iris::Staging{buf, sizeof buf});
struct Staging {
  void* buffer;
  unsigned int bytes;
};
template <class T>
IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb,
                           const Staging& staging);
template <class T>
IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb,
                           const Staging& staging);
template <class T>
IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, int cur_rank,
                            const uint64_t* hb, const Staging& staging);

// ---- Trace events (beyond Iris's record_event_start/end; docs/tracing.md) ---------------------------
// While iris.trace is on, a kernel marks what its blocks do; the trace shows each event on its rank's
// timeline, one track per block, with the target rank and bytes. The block's first thread
// (threadIdx 0, 0, 0) records: call both where every thread of the block, or at least that one,
// passes; the other threads get an empty handle. Events go into a bounded per-rank buffer in the
// rank's heap; what does not fit is counted, never written. Without a trace the module is compiled
// without IRIS_TRACE_DEVICE and both calls compile to nothing.
//
// Event ids: Iris's numbers, named below; any other number is the user's, named from Lua with
// iris.trace.names{[4096] = "pack"} (unnamed ones show as "event 4096").
// iris::event::load = 0, store, get, put, copy, atomic_add ... atomic_max = 13, fetch = 1024,
// compute = 2048, reduce = 2049, wait = 3072, barrier = 3073 (the list: impl/abi.h).
namespace event {
#define IRIS_TRACE_EVENT_CONSTANT(name, id) constexpr uint32_t name = id;
IRIS_TRACE_EVENTS(IRIS_TRACE_EVENT_CONSTANT)
#undef IRIS_TRACE_EVENT_CONSTANT
}  // namespace event

// What trace_begin returns and trace_end takes; empty when nothing was recorded.
struct TraceHandle {
  uint32_t index = 0xffffffffu;
};

// Opens event `id` of this block: `target_rank` the rank it reaches (-1: none), `bytes` what it moves.
IRIS_DEVICE TraceHandle trace_begin(uint32_t id, int target_rank = -1, uint64_t bytes = 0);
// Closes it (an empty handle: nothing).
IRIS_DEVICE void trace_end(TraceHandle handle);

// ---- The context a kernel receives from Lua (iris::Context, passed by value) ----------------------
// Its fields are abi::ContextData's (impl/abi.h): heap_bases (world_size entries), rank (the current
// rank), world_size. Its methods are the calls above without the current rank and `hb`.
struct Context : abi::ContextData {

  template <class T> IRIS_DEVICE T* translate(T* p, int to_rank) const;
  template <class T> IRIS_DEVICE T load(const T* p, int from_rank) const;
  template <class T> IRIS_DEVICE void store(T* p, value_of<T> v, int to_rank) const;
  template <class T> IRIS_DEVICE void get(const T* from_p, T* to_p, int from_rank) const;
  template <class T> IRIS_DEVICE void put(const T* from_p, T* to_p, int to_rank) const;
  template <class T> IRIS_DEVICE void copy(const T* src, T* dst, int from_rank, int to_rank) const;

  template <class T> IRIS_DEVICE T atomic_add(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_sub(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_xchg(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_xor(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_and(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_or(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_min(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T> IRIS_DEVICE T atomic_max(T* p, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;
  template <class T>
  IRIS_DEVICE T atomic_cas(T* p, value_of<T> cmp, value_of<T> v, int to_rank, Semantic sem = acq_rel, Scope scope = sys) const;

  template <class T> IRIS_DEVICE void signal_set(T* p, value_of<T> v, int to_rank) const;
  template <class T> IRIS_DEVICE T signal_add(T* p, value_of<T> v, int to_rank) const;
  template <class T>
  IRIS_DEVICE T wait_until(const T* p, Cmp cmp, value_of<T> value, Semantic sem = acquire, Scope scope = sys,
                           const char* file = __builtin_FILE(), int line = __builtin_LINE()) const;

  template <class T> IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int to_rank) const;
  template <class T> IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank) const;
  template <class T> IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank) const;
  template <class T>
  IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int to_rank, const Staging& staging) const;
  template <class T>
  IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, const Staging& staging) const;
  template <class T>
  IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank,
                              const Staging& staging) const;

  IRIS_DEVICE TraceHandle trace_begin(uint32_t id, int target_rank = -1, uint64_t bytes = 0) const;
  IRIS_DEVICE void trace_end(TraceHandle handle) const;

  // Iris spellings.
  IRIS_DEVICE int get_rank() const { return rank; }
  IRIS_DEVICE int get_num_ranks() const { return world_size; }
};

}  // namespace iris

// Bodies, in dependency order.
#include "impl/order.hpp"
#include "impl/report.hpp"
#include "impl/remote.hpp"
#include "impl/rma.hpp"
#include "impl/atomics.hpp"
#include "impl/wait.hpp"
#include "impl/block_copy.hpp"
#include "impl/staged_copy.hpp"
#include "impl/context.hpp"
#include "impl/trace.hpp"
#include "ccl.hpp"
#include "gemm.hpp"
#if defined(IRIS_PLATFORM_CPU)
#include "impl/cpu_builtins.hpp"
#endif

#endif  // IRIS_IRIS_HPP
