#include "runtime/cpu/cpu_warps.hpp"

#include "core/error.hpp"

namespace iris::runtime::cpu {
namespace {

constexpr uint32_t kKindBits = 0xff;

uint32_t lanes_below(unsigned n) { return n >= kWarpSize ? ~0u : (1u << n) - 1u; }

// The lane a shuffle reads, as PTX's shfl.sync defines it (CUDA passes c = ((32 - width) << 8) | 31,
// and 0 instead of 31 for shfl.up): segments of `width` lanes, the source clamped to the lane's own.
unsigned shuffle_source(uint32_t kind, unsigned lane, int32_t lane_arg, int32_t width) {
  const unsigned segment = static_cast<unsigned>(32 - width) & 31u;  // the bits that pick the segment
  const unsigned b = static_cast<unsigned>(lane_arg) & 31u;
  const int clamp = kind == IRIS_CPU_WARP_SHFL_UP ? 0 : 31;
  const int min_lane = static_cast<int>(lane & segment);
  const int max_lane = min_lane | (clamp & ~static_cast<int>(segment));
  int j = static_cast<int>(lane);
  bool inside = true;
  switch (kind) {
    case IRIS_CPU_WARP_SHFL_UP: j = static_cast<int>(lane) - static_cast<int>(b); inside = j >= max_lane; break;
    case IRIS_CPU_WARP_SHFL_DOWN: j = static_cast<int>(lane + b); inside = j <= max_lane; break;
    case IRIS_CPU_WARP_SHFL_XOR: j = static_cast<int>(lane ^ b); inside = j <= max_lane; break;
    default: j = min_lane | static_cast<int>(b & ~segment); inside = j <= max_lane; break;
  }
  return inside ? static_cast<unsigned>(j) : lane;
}

}  // namespace

const char* warp_op_name(uint32_t kind) {
  const bool implicit = (kind & IRIS_CPU_WARP_IMPLICIT) != 0;
  switch (kind & kKindBits) {
    case IRIS_CPU_WARP_SYNC: return "__syncwarp";
    case IRIS_CPU_WARP_SHFL_IDX: return implicit ? "__shfl" : "__shfl_sync";
    case IRIS_CPU_WARP_SHFL_UP: return implicit ? "__shfl_up" : "__shfl_up_sync";
    case IRIS_CPU_WARP_SHFL_DOWN: return implicit ? "__shfl_down" : "__shfl_down_sync";
    case IRIS_CPU_WARP_SHFL_XOR: return implicit ? "__shfl_xor" : "__shfl_xor_sync";
    case IRIS_CPU_WARP_BALLOT: return implicit ? "__ballot" : "__ballot_sync";
    case IRIS_CPU_WARP_ANY: return implicit ? "__any" : "__any_sync";
    case IRIS_CPU_WARP_ALL: return implicit ? "__all" : "__all_sync";
    case IRIS_CPU_WARP_ACTIVE: return "__activemask";
    default: return "a warp collective";
  }
}

BlockWarps::BlockWarps(unsigned max_threads)
    : lanes_(max_threads), waiting_((max_threads + kWarpSize - 1) / kWarpSize),
      exited_((max_threads + kWarpSize - 1) / kWarpSize) {}

void BlockWarps::reset(unsigned threads) {
  threads_ = threads;
  waiting_count_ = 0;
  const unsigned warps = (threads + kWarpSize - 1) / kWarpSize;
  for (unsigned w = 0; w < warps; ++w) waiting_[w] = exited_[w] = 0;
}

uint32_t BlockWarps::present(unsigned warp) const {
  return lanes_below(threads_ - warp * kWarpSize) & ~exited_[warp];
}

bool BlockWarps::arrive(unsigned thread, const abi::CpuWarpOp& op, void* waiter, std::vector<void*>& resume,
                        std::string* error) {
  const unsigned warp = thread / kWarpSize, lane = thread % kWarpSize;
  Lane& self = lanes_[thread];
  if ((op.kind & IRIS_CPU_WARP_IMPLICIT) == 0 && ((op.mask >> lane) & 1u) == 0) {
    *error = format("%s called by lane %u of warp %u with mask 0x%08x, which does not name the lane itself "
                    "(undefined on a GPU: a lane must be in the mask it passes)",
                    warp_op_name(op.kind), lane, warp, op.mask);
    return true;
  }
  self.op = op;
  self.waiter = waiter;
  self.result = 0;
  waiting_[warp] |= 1u << lane;
  ++waiting_count_;
  bool done = false;
  settle(warp, static_cast<int>(thread), &done, resume, error);
  return done;
}

void BlockWarps::settle_after_exit(unsigned thread, std::vector<void*>& resume, std::string* error) {
  const unsigned warp = thread / kWarpSize;
  if (waiting_[warp] != 0) settle(warp, -1, nullptr, resume, error);
}

// Completes, in lane order, every collective of `warp` whose lanes are all there.
void BlockWarps::settle(unsigned warp, int arriving, bool* arriving_done, std::vector<void*>& resume,
                        std::string* error) {
  const uint32_t here = present(warp);
  for (uint32_t candidates = waiting_[warp]; candidates != 0; candidates &= candidates - 1) {
    const unsigned l = static_cast<unsigned>(__builtin_ctz(candidates));
    if (((waiting_[warp] >> l) & 1u) == 0) continue;  // completed with an earlier lane's group
    const abi::CpuWarpOp& op = lanes_[warp * kWarpSize + l].op;
    uint32_t group = 0;
    if (op.kind & IRIS_CPU_WARP_IMPLICIT) {
      if ((here & ~waiting_[warp]) != 0) continue;  // a lane still running may join
      for (uint32_t w = waiting_[warp]; w != 0; w &= w - 1) {
        const unsigned k = static_cast<unsigned>(__builtin_ctz(w));
        if (lanes_[warp * kWarpSize + k].op.kind == op.kind) group |= 1u << k;
      }
    } else {
      group = op.mask & here;
      if ((group & ~waiting_[warp]) != 0) continue;  // a lane it names has not arrived yet
      if (!complete_if_agreed(warp, group, error)) return;
    }
    complete(warp, group, arriving, arriving_done, resume);
  }
}

bool BlockWarps::complete_if_agreed(unsigned warp, uint32_t group, std::string* error) {
  const unsigned first = static_cast<unsigned>(__builtin_ctz(group));
  const abi::CpuWarpOp& a = lanes_[warp * kWarpSize + first].op;
  for (uint32_t g = group & (group - 1); g != 0; g &= g - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(g));
    const abi::CpuWarpOp& b = lanes_[warp * kWarpSize + k].op;
    if (b.kind != a.kind || b.mask != a.mask) {
      *error = format("the lanes of warp %u disagree: lane %u calls %s with mask 0x%08x, lane %u calls %s with mask "
                      "0x%08x (every lane a mask names must make the same call with the same mask)",
                      warp, first, warp_op_name(a.kind), a.mask, k, warp_op_name(b.kind), b.mask);
      return false;
    }
  }
  return true;
}

void BlockWarps::complete(unsigned warp, uint32_t group, int arriving, bool* arriving_done, std::vector<void*>& resume) {
  Lane* lanes = &lanes_[warp * kWarpSize];
  uint32_t ballot = 0;
  for (uint32_t g = group; g != 0; g &= g - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(g));
    if (lanes[k].op.value != 0) ballot |= 1u << k;
  }
  for (uint32_t g = group; g != 0; g &= g - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(g));
    Lane& lane = lanes[k];
    const uint32_t kind = lane.op.kind & kKindBits;
    switch (kind) {
      case IRIS_CPU_WARP_SYNC: lane.result = 0; break;
      case IRIS_CPU_WARP_BALLOT: lane.result = ballot; break;
      case IRIS_CPU_WARP_ANY: lane.result = ballot != 0; break;
      case IRIS_CPU_WARP_ALL: lane.result = ballot == group; break;
      case IRIS_CPU_WARP_ACTIVE: lane.result = group; break;
      default: {
        const unsigned source = shuffle_source(kind, k, lane.op.lane_arg, lane.op.width);
        lane.result = ((group >> source) & 1u) != 0 ? lanes[source].op.value : lane.op.value;
      }
    }
  }
  waiting_[warp] &= ~group;
  waiting_count_ -= static_cast<unsigned>(__builtin_popcount(group));
  for (uint32_t g = group; g != 0; g &= g - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(g));
    if (static_cast<int>(warp * kWarpSize + k) == arriving) {
      *arriving_done = true;
    } else {
      resume.push_back(lanes[k].waiter);
    }
  }
}

bool BlockWarps::settle_stalled(std::vector<void*>& resume) {
  bool any = false;
  const unsigned warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (unsigned warp = 0; warp < warps && waiting_count_ != 0; ++warp) {
    for (uint32_t w = waiting_[warp]; w != 0; w = waiting_[warp] & ~lanes_below(__builtin_ctz(w) + 1)) {
      const unsigned l = static_cast<unsigned>(__builtin_ctz(w));
      const uint32_t kind = lanes_[warp * kWarpSize + l].op.kind;
      if ((kind & IRIS_CPU_WARP_IMPLICIT) == 0) continue;
      uint32_t group = 0;
      for (uint32_t g = waiting_[warp]; g != 0; g &= g - 1) {
        const unsigned k = static_cast<unsigned>(__builtin_ctz(g));
        if (lanes_[warp * kWarpSize + k].op.kind == kind) group |= 1u << k;
      }
      complete(warp, group, -1, nullptr, resume);
      any = true;
    }
  }
  return any;
}

std::string BlockWarps::describe_deadlock(unsigned* thread, void** waiter) const {
  const unsigned warps = (threads_ + kWarpSize - 1) / kWarpSize;
  for (unsigned warp = 0; warp < warps; ++warp) {
    if (waiting_[warp] == 0) continue;
    const unsigned l = static_cast<unsigned>(__builtin_ctz(waiting_[warp]));
    const Lane& lane = lanes_[warp * kWarpSize + l];
    *thread = warp * kWarpSize + l;
    *waiter = lane.waiter;
    const uint32_t missing = lane.op.mask & present(warp) & ~waiting_[warp];
    return format("warp collectives that can never complete: lanes 0x%08x of warp %u wait in %s with mask 0x%08x "
                  "for lanes 0x%08x, which wait elsewhere (at __syncthreads() or in a collective with another "
                  "mask); on a GPU this hangs",
                  waiting_[warp], warp, warp_op_name(lane.op.kind), lane.op.mask, missing);
  }
  *thread = 0;
  *waiter = nullptr;
  return "warp collectives that can never complete";
}

}  // namespace iris::runtime::cpu
