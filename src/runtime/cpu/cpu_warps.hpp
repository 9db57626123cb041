// Warp collectives for the cpu executor: shuffles, votes and __syncwarp among the threads of a block.
//
// The executor runs a block's threads one after another on fibers, so a warp has no lockstep: a lane
// that reaches a collective waits (its fiber parks) until every lane its mask names has either
// arrived or exited, then all of them get their results at once, computed as the GPU would. The
// rules follow NVIDIA's 32-lane warps:
//   - lane = linear thread index (x + y*bx + z*bx*by) % 32; lanes past the end of a block's last,
//     partial warp do not exist and count as exited;
//   - shuffles compute the source lane with PTX's shfl.sync formula (segments of `width` lanes; up
//     clamps at the segment's start, down/xor/idx at its end, returning the lane's own value);
//     a source lane that takes no part (undefined on a GPU) gives the lane its own value;
//   - votes see the predicates of the lanes that take part (named by the mask, not exited);
//   - HIP's spellings without a mask (__shfl, __ballot, ...) and __activemask take the lanes that
//     arrive together: the group completes when every present lane waits in some collective, or when
//     nothing else can run (the others wait at __syncthreads), so a branch's lanes find each other;
//   - a lane calling with a mask that does not name it, and lanes of one group disagreeing on the
//     operation or the mask, are device faults naming them (undefined behaviour on a GPU).
// This class holds the bookkeeping only; the executor parks and resumes the fibers it names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iris/impl/abi.h"

namespace iris::runtime::cpu {

constexpr unsigned kWarpSize = 32;

class BlockWarps {
 public:
  explicit BlockWarps(unsigned max_threads);

  // A new block of `threads` threads: no lane waits, none has exited.
  void reset(unsigned threads);
  // `thread` returned from the kernel. Cheap: the executor calls it for every thread.
  void exited(unsigned thread) { exited_[thread / kWarpSize] |= 1u << (thread % kWarpSize); }
  bool any_waiting() const { return waiting_count_ != 0; }

  // `thread` arrives at `op`; `waiter` is what to resume when it must wait. Returns true when its
  // collective completed at once (it goes on; result(thread) holds its value), false when it waits.
  // Lanes whose collective completed now are appended to `resume`. A misuse sets `*error`.
  bool arrive(unsigned thread, const abi::CpuWarpOp& op, void* waiter, std::vector<void*>& resume,
              std::string* error);
  // After exited(thread): completes the collectives that waited only for it.
  void settle_after_exit(unsigned thread, std::vector<void*>& resume, std::string* error);
  // Nothing else in the block can run: completes the mask-less (HIP) collectives with the lanes that
  // arrived. Returns whether any completed.
  bool settle_stalled(std::vector<void*>& resume);
  // No collective can ever complete: what waits for what, and a waiting thread to blame.
  std::string describe_deadlock(unsigned* thread, void** waiter) const;

  uint64_t result(unsigned thread) const { return lanes_[thread].result; }

 private:
  struct Lane {
    abi::CpuWarpOp op{};
    uint64_t result = 0;
    void* waiter = nullptr;
  };

  uint32_t present(unsigned warp) const;  // lanes that exist and have not exited
  void settle(unsigned warp, int arriving, bool* arriving_done, std::vector<void*>& resume, std::string* error);
  bool complete_if_agreed(unsigned warp, uint32_t group, std::string* error);
  void complete(unsigned warp, uint32_t group, int arriving, bool* arriving_done, std::vector<void*>& resume);

  unsigned threads_ = 0;
  unsigned waiting_count_ = 0;
  std::vector<Lane> lanes_;
  std::vector<uint32_t> waiting_;  // per warp: lanes parked in a collective
  std::vector<uint32_t> exited_;   // per warp: lanes that returned
};

// The CUDA spelling of a collective, for messages.
const char* warp_op_name(uint32_t kind);

}  // namespace iris::runtime::cpu
