// The inter-node transport: an MPI-3 one-sided window over every rank's symmetric heap, driven with
// passive-target synchronization (one MPI_Win_lock_all for the window's life) by the host proxy
// (session/proxy.hpp). Open MPI serves it with osc ucx on clusters (InfiniBand, RoCE), osc rdma over its
// BTLs elsewhere (docs/decisions.md: why MPI-3 one-sided rather than UCX's UCP).
//
// Every call but create() and the destructor may come from another thread than the main one (the
// proxy's); MPI must then run at MPI_THREAD_MULTIPLE (Comm::threads_may_call_mpi). Calls on one window
// are not made from two threads at once: the caller serializes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace iris::comm {

class Comm;

class RmaWindow {
 public:
  // The element types of element-wise operations, by width and kind.
  enum class Type : uint8_t { u8, u16, u32, u64, i32, i64, f32, f64 };
  enum class Op : uint8_t { sum, replace, band, bor, bxor, min, max, no_op };

  // Collective over every rank of `comm`: exposes [base, base + bytes) of this rank. Throws
  // Error(environment) naming the MPI call and what to do when the MPI library has no one-sided
  // component that works with threads.
  static std::unique_ptr<RmaWindow> create(Comm& comm, void* base, size_t bytes);
  // Collective too (MPI_Win_free): every rank destroys its window at the same point of the job's end.
  ~RmaWindow();
  RmaWindow(const RmaWindow&) = delete;
  RmaWindow& operator=(const RmaWindow&) = delete;

  // Non-blocking: complete only after flush_all(). `offset` is from the target's window base.
  void put(const void* origin, size_t bytes, int target, uint64_t offset);
  void get(void* origin, size_t bytes, int target, uint64_t offset);
  // `count` elements of `type`, element-wise atomic; operations of one origin on the same target
  // location are applied in the order issued (MPI's default accumulate ordering).
  void accumulate(const void* origin, int count, Type type, Op op, int target, uint64_t offset);
  void fetch_and_op(const void* value, void* result, Type type, Op op, int target, uint64_t offset);
  void compare_and_swap(const void* value, const void* compare, void* result, Type type, int target, uint64_t offset);
  // Completes every operation issued so far, at the origin and at the targets: MPI_Win_flush on each
  // target that has operations since the last completion, not MPI_Win_flush_all. With Open MPI 4.1's
  // osc ucx over UCX's shared-memory transports (no one-sided hardware: UCX emulates gets and puts with
  // messages), MPI_Win_flush_all returned before a get of 256 KiB or more had landed: its data came
  // later, into memory the caller had reused or freed (wrong results, corrupted host memory); the flush
  // of the target completes it (docs/decisions.md, docs/multinode.md).
  void flush_all();
  // Gives MPI a chance to progress operations that target this rank (needed by components that emulate
  // one-sided operations with messages; a no-op cost elsewhere).
  void progress();

  // What serves the window ("osc ucx", "osc rdma"): MPI's info where it says, else "".
  const std::string& component() const { return component_; }

 private:
  RmaWindow() = default;
  struct Mpi;
  void issued(int target);  // `target` has an operation to complete at the next flush_all()

  std::unique_ptr<Mpi> m_;
  std::string component_;
};

}  // namespace iris::comm
