// The one-way protocol of the small collectives (variant "ll"; docs/collectives.md, "One way"): the
// data and the call's epoch travel in the same stores, into a staging area in the receiver's heap,
// so a call is one round of stores and nothing else: no arrival to wait for before touching a peer,
// no fence, no end-of-call round trip. Included by kernels/ccl/*.hip (each collective's ccl_ll_
// kernel), not by user snippets.
//
// Lines. Every 8 bytes of data travel as a 16-byte line {data low, epoch, data high, epoch}; each
// 8-byte half is written and read as one access, so a half whose epoch is the call's carries that
// call's data (NCCL's LL protocol). The receiver spins on its own memory until both halves show the
// epoch. Epochs are the pair epochs of the call protocol (ccl_call.hpp), 32 bits of them: a line of
// an older call never shows the current epoch (they wrap after 2^32 calls between two ranks).
//
// Staging. Every rank's heap holds, for every source rank q, two parities (pair epoch mod 2) of two
// phases (two_shot's second round uses phase 1) of one slot: a header line, then the data lines. The
// sender writes into the receiver's slot (q = the sender), the receiver reads its own memory.
//
// Reuse. A sender writes the slot of parity e % 2 at epoch e only after the receiver arrived at
// epoch e - 1 (its `arrived` slot, which every call writes): the receiver's call e - 2, which read
// that slot, has ended by then. Usually long since, so the check is one local read.
//
// Mismatches. Line 0 of a slot carries a hash of the sender's call descriptor (call_hash). The
// receiver compares it with its own; only when they differ, or when no header comes but the peer has
// arrived (it called something that is not one-way), is the full descriptor read and the mismatch
// reported, with the words of every other call (report_mismatch).
//
// Progress. Every wait is for lines that the peer's thread of the same global index writes (all ranks
// map words to threads alike), and the header waits of block 0's control warp for the peers' block 0:
// a block never waits for another block of its own launch, so the cpu backend's blocks, run a few at a
// time in index order, make progress.
#ifndef IRIS_IMPL_CCL_LL_HPP
#define IRIS_IMPL_CCL_LL_HPP

#include <iris/impl/ccl_call.hpp>

namespace iris {
namespace ccl {
namespace detail {

// A spin on the calling thread's own memory: hot at first (a one-way line usually lands within a few
// microseconds), then the bounded spin of every device wait, which backs off and gives up in the end.
template <class Poll, class GiveUp>
IRIS_DEVICE void spin_until(Poll poll, GiveUp give_up) {
  for (int i = 0; i < 2048; ++i) {
    if (poll()) return;
  }
  ::iris::detail::bounded_spin(poll, give_up);
}

// The threads of a one-way block: the data threads take words, the last warp (the control warp) takes
// what would hold them back: credits, and in block 0 the headers and the arrival, whose release fence
// waits for the block's stores to reach the peers. The host launches data threads + kControlThreads.
constexpr int kControlThreads = 32;
// The most data threads a one-way block has (src/lua/iris/ccl.lua, ONE_WAY_THREADS), and the bound the
// kernels are compiled for: without it the compiler may use more registers than a block of 544 threads
// can have (seen on an H100: "at most 512 threads per block").
constexpr int kMaxDataThreads = 512;
#define IRIS_CCL_ONE_WAY_KERNEL __launch_bounds__(544)
static_assert(kMaxDataThreads + kControlThreads == 544, "IRIS_CCL_ONE_WAY_KERNEL's bound is a one-way block's size");
IRIS_DEVICE int data_threads() { return thread_count() - kControlThreads; }
IRIS_DEVICE bool control_thread() { return thread_index() >= data_threads(); }
IRIS_DEVICE int control_lane() { return thread_index() - data_threads(); }

// ---- the cold paths: reports (out of line, so the hot path keeps its values in registers) ----------

// When q has arrived with a call that is not one-way (its descriptor in this rank's state carries the
// epoch, released before its arrival): that call is not this one.
__device__ __noinline__ void mismatch_if_not_one_way(const Call* call, int q, uint64_t epoch) {
  if (::iris::detail::atomic_load(&call->state->arrived[q], acquire, sys) < epoch) return;
  const CallDescriptor& theirs = call->state->descriptors[q][epoch & 1];
  if (theirs.epoch == epoch && !same_call(call->mine, theirs)) report_mismatch(call->team.rank(), call->mine, q, theirs);
}

// A wait for q that ran out of time: a call of another kind, else q did not call.
[[noreturn]] __device__ __noinline__ void one_way_give_up(const Call* call, int q, unsigned long long waited) {
  const uint64_t epoch = call->epoch_with(q);
  mismatch_if_not_one_way(call, q, epoch);
  call->report_absent(q, ::iris::detail::atomic_load(&call->state->arrived[q], relaxed, sys), epoch, waited);
}

[[noreturn]] __device__ __noinline__ void one_way_absent(const Call* call, int q, uint64_t seen, uint64_t epoch,
                                                         unsigned long long waited) {
  call->report_absent(q, seen, epoch, waited);
}

[[noreturn]] __device__ __noinline__ void one_way_mismatch(const Call* call, int q) {
  report_mismatch(call->team.rank(), call->mine, q, call->one_way_descriptor(q, call->epoch_with(q)));
}

// The spin of OneWay::receive once the line was not there at the first look.
__device__ __noinline__ uint64_t receive_slowly(const Call* call, const Line* line, uint32_t flag, int q) {
  uint64_t data = 0;
  spin_until([&] { return line_load(line, flag, data); },
             [&](unsigned long long waited) { one_way_give_up(call, q, waited); });
  return data;
}

// What a block's threads read in the hot path, per member q (global rank): this call's slots, built
// once per block in shared memory by one_way(). Before, each thread recomputed them from the call
// state for every word it sent or received (dependent global loads of the pair epoch, the staging and
// the heap bases on every line) and kept the Call in local memory for the out-of-line reports (a 1 KiB
// stack written by every thread of every launch): docs/perf.md, "The fixed cost of a call".
struct Route {
  Line* to[2];          // this rank's slot in q's heap, phases 0 and 1
  const Line* from[2];  // q's slot in this rank's heap, phases 0 and 1
  uint64_t epoch;       // the pair epoch of this call with q
};

// The block's copy of the call (what the reports read), its hash, the routes and the members in order.
struct OneWayBlock {
  Call call;
  uint64_t hash;  // call_hash of this rank's descriptor
  Route routes[kMaxRanks];
  int ranks[kMaxRanks];  // member i's global rank
};

// The one instance per block (a __shared__ variable of a function has one per block and kernel).
IRIS_DEVICE OneWayBlock& one_way_block() {
  __shared__ OneWayBlock block;
  return block;
}

// The one-way side of a Call: its block's routes (shared memory), and the state for the arrival.
// `call` is for the reports and the descriptor; it lives in the same shared block.
struct OneWay {
  const OneWayBlock* block;
  const Call* call;
  CallState* state;
  const uint64_t* heap_bases;
  int me;
  int index;  // this rank's position among the members
  int size;   // members

  IRIS_DEVICE uint64_t epoch(int q) const { return block->routes[q].epoch; }
  IRIS_DEVICE uint32_t flag(int q) const { return static_cast<uint32_t>(block->routes[q].epoch); }

  // The slot this rank writes in q's heap, and the slot q writes in this rank's.
  IRIS_DEVICE Line* to(int q, int phase) const { return block->routes[q].to[phase]; }
  IRIS_DEVICE const Line* from(int q, int phase) const { return block->routes[q].from[phase]; }

  // The global rank of member i, and of the member i places after this rank (rotated order: each
  // rank starts with a different peer).
  IRIS_DEVICE int member(int i) const { return block->ranks[i]; }
  IRIS_DEVICE int peer(int i) const {
    const int j = index + i;
    return block->ranks[j >= size ? j - size : j];
  }

  // Until q has arrived at least at `epoch` (its own call `epoch`, with this rank, has started).
  IRIS_DEVICE void wait_arrived(int q, uint64_t e) const {
    const uint64_t* slot = &state->arrived[q];
    uint64_t seen = 0;
    const Call* c = call;
    spin_until(
        [&] {
          seen = ::iris::detail::atomic_load(slot, relaxed, sys);
          return seen >= e;
        },
        [&](unsigned long long waited) { one_way_absent(c, q, seen, e, waited); });
  }

  // The control warp waits until every other member arrived at `epoch(q) - back` (back 1: the
  // credits above; 0: every member has started this call), but `heard` (a member whose lines this rank
  // waits for anyway: they come from its call); the block goes on together.
  IRIS_DEVICE void wait_members(const Team& team, uint64_t back, int heard = -1) const {
    if (control_thread()) {
      for (int i = control_lane(); i < team.size; i += kControlThreads) {
        const int q = team.rank_of(i);
        if (q != me && q != heard) wait_arrived(q, epoch(q) - back);
      }
    }
    __syncthreads();
  }


  IRIS_DEVICE void send(int q, int phase, int64_t word, uint64_t data) const {
    line_store(to(q, phase) + kHeaderLines + word, data, flag(q));
  }

  // One look at the line inline; the spin, when it is not there yet, out of line: one copy of its code
  // for every call site, so the kernel's hot path stays short (its instruction fetches were a large
  // part of a small call's time: docs/perf.md, "The fixed cost of a call").
  IRIS_DEVICE uint64_t receive(int q, int phase, int64_t word) const {
    const Line* line = from(q, phase) + kHeaderLines + word;
    const uint32_t f = flag(q);
    uint64_t data = 0;
    if (line_load(line, f, data)) return data;
    return receive_slowly(call, line, f, q);
  }

  // The control warp of block 0, once the data threads have begun to send: the header to every member
  // (line 0 the hash, then the descriptor a word a line), the arrival (relaxed: it only says that this
  // call has started, and no fence holds the kernel back), then every member's header checked.
  IRIS_DEVICE void exchange_headers(const Team& team) const {
    if (blockIdx.x != 0 || !control_thread()) return;
    const int lines = 1 + kDescriptorLines;
    for (int i = control_lane(); i < team.size * lines; i += kControlThreads) {
      const int q = team.rank_of(i / lines), line = i % lines;
      if (q == me) continue;
      uint64_t word = block->hash;
      if (line > 0) {
        CallDescriptor d = call->mine;
        d.epoch = epoch(q);
        word = reinterpret_cast<const uint64_t*>(&d)[line - 1];
      }
      line_store(to(q, 0) + line, word, flag(q));
    }
    // Every lane's lines are out before any lane may report a mismatch (which ends the kernel): a peer
    // that finds a different hash reads this rank's descriptor lines, and must find them all.
    __syncwarp();
    for (int i = control_lane(); i < team.size; i += kControlThreads) {
      const int q = team.rank_of(i);
      if (q != me) ::iris::detail::atomic_store(::iris::translate(&state->arrived[me], me, q, heap_bases), epoch(q), relaxed, sys);
    }
    for (int i = control_lane(); i < team.size; i += kControlThreads) {
      const int q = team.rank_of(i);
      if (q != me) check_header(q);
    }
  }

  IRIS_DEVICE void check_header(int q) const {
    const Line* line = from(q, 0);
    const uint32_t f = flag(q);
    const uint64_t e = epoch(q);
    const Call* c = call;
    uint64_t theirs = 0;
    unsigned int polls = 0;
    spin_until(
        [&] {
          if (line_load(line, f, theirs)) return true;
          // No header yet: a peer that arrived with a call that is not one-way called something else.
          if ((++polls & 255u) == 0u) mismatch_if_not_one_way(c, q, e);
          return false;
        },
        [&](unsigned long long waited) { one_way_give_up(c, q, waited); });
    if (theirs != block->hash) one_way_mismatch(c, q);
  }
};

// ---- words: 8 bytes of elements -----------------------------------------------------------------
// Word w of a run of n elements holds elements [w * per, (w + 1) * per), per = 8 / sizeof(S); the
// last word may be short. One 8-byte access where the run allows it, else element by element.

template <class S>
IRIS_DEVICE int64_t words_of(int64_t n) {
  constexpr int64_t per = 8 / sizeof(S);
  return (n + per - 1) / per;
}

template <class S>
IRIS_DEVICE uint64_t load_word(const S* p, int64_t w, int64_t n) {
  constexpr int per = 8 / sizeof(S);
  typedef typename unsigned_of<sizeof(S)>::type U;
  const S* first = p + w * per;
  const int64_t valid = n - w * per;
  if (valid >= per && (reinterpret_cast<uintptr_t>(first) & 7u) == 0) return *reinterpret_cast<const uint64_t*>(first);
  uint64_t x = 0;
#pragma unroll
  for (int j = 0; j < per; ++j) {
    if (j < valid) x |= static_cast<uint64_t>(::iris::detail::bit_cast<U>(first[j])) << (8 * sizeof(S) * j);
  }
  return x;
}

template <class S>
IRIS_DEVICE void store_word(S* p, int64_t w, int64_t n, uint64_t x) {
  constexpr int per = 8 / sizeof(S);
  typedef typename unsigned_of<sizeof(S)>::type U;
  S* first = p + w * per;
  const int64_t valid = n - w * per;
  if (valid >= per && (reinterpret_cast<uintptr_t>(first) & 7u) == 0) {
    *reinterpret_cast<uint64_t*>(first) = x;
    return;
  }
#pragma unroll
  for (int j = 0; j < per; ++j) {
    if (j < valid) first[j] = ::iris::detail::bit_cast<S>(static_cast<U>(x >> (8 * sizeof(S) * j)));
  }
}

// A word's elements in the accumulator type, transformed for the reduction (ccl_types.hpp).
template <class S>
struct WordValues {
  typedef typename accumulator<S>::type A;
  typedef typename unsigned_of<sizeof(S)>::type U;
  static constexpr int per = 8 / sizeof(S);
  A v[per];

  IRIS_DEVICE void load(uint64_t x, const Reduction& r) {
#pragma unroll
    for (int j = 0; j < per; ++j) {
      v[j] = transform(to_accumulator<A>(::iris::detail::bit_cast<S>(static_cast<U>(x >> (8 * sizeof(S) * j)))), r);
    }
  }
  IRIS_DEVICE void combine(uint64_t x, const Reduction& r) {
    WordValues other;
    other.load(x, r);
    combine_unit(v, other.v, r.base);
  }
  IRIS_DEVICE uint64_t word(const Reduction& r) const {
    uint64_t x = 0;
#pragma unroll
    for (int j = 0; j < per; ++j) {
      const U bits = ::iris::detail::bit_cast<U>(from_accumulator<S>(transform(v[j], r)));
      x |= static_cast<uint64_t>(bits) << (8 * sizeof(S) * j);
    }
    return x;
  }
};

// Data thread g of the grid (g counts the data threads of every block); the control warp takes no word.
IRIS_DEVICE int64_t global_thread() {
  return control_thread() ? static_cast<int64_t>(0x7fffffffffffffffll) : static_cast<int64_t>(blockIdx.x) * data_threads() + thread_index();
}
IRIS_DEVICE int64_t global_threads() { return static_cast<int64_t>(gridDim.x) * data_threads(); }

// ---- a one-way kernel's frame -------------------------------------------------------------------
// Global data thread g handles words g, g + threads, ... of a run, on every rank alike.
struct Words {
  int64_t count, first, step;
};

template <class S>
IRIS_DEVICE Words words(int64_t n) {
  return Words{words_of<S>(n), global_thread(), global_threads()};
}

// The call around the data, set up before the block's first barrier, in parallel: thread 0 makes the
// descriptor (as every variant makes it) and its hash into the block's shared OneWayBlock, and thread i
// the route of member i from its own reads of the call state (the call counter, the staging, then the
// pair epoch), then takes that member's credit: a sender writes the slot of parity e % 2 at pair epoch
// e only once the receiver arrived at e - 1 (it is done with the slot; usually long since, so this is
// the value already read). One barrier, then the bookkeeping without deliveries (Call::begin_one_way);
// the count of calls comes at the end (Call::finish). The reference stays valid for the kernel's run.
IRIS_DEVICE const Call& one_way_call(const iris::Context& ctx, const char* name, int collective, uint32_t group_lo,
                                     uint32_t group_hi, int variant, int dtype, int op, int root, long count,
                                     const void* a, const void* b) {
  OneWayBlock& block = one_way_block();
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  if (thread_index() == 0) {
    block.call = make_call(ctx, name, collective, group, variant, dtype, op, root, static_cast<uint64_t>(count), 1, 1, 0,
                           0, {a, count}, {b, count});
    block.hash = call_hash(block.call.mine);
    ::iris::fence(acq_rel, ::iris::block);  // a credit's report (below, seconds later) reads it
  }
  const Team members = team(ctx, group);
  const int me = ctx.rank;
  for (int i = thread_index(); i < members.size; i += thread_count()) {
    const int q = members.rank_of(i);
    block.ranks[i] = q;
    CallState* state = reinterpret_cast<CallState*>(static_cast<uintptr_t>(ctx.heap_bases[me]) + IRIS_CCL_STATE_OFFSET);
    const uint64_t seq = state->calls + 1;                        // as make_call reads it
    const uint64_t e = state->pair_epoch[(seq - 1) & 1][q] + 1;  // Call::epoch_with
    const Staging staging{reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(ctx.heap_bases[me]) + state->staging),
                          state->slot_bytes};
    Route& r = block.routes[q];
    r.epoch = e;
    for (int phase = 0; phase < 2; ++phase) {
      r.to[phase] = ::iris::translate(staging.slot(me, e, phase), me, q, ctx.heap_bases);
      r.from[phase] = staging.slot(q, e, phase);
    }
    if (q == me) continue;
    const uint64_t* arrived = &state->arrived[q];
    uint64_t seen = 0;
    spin_until(
        [&] {
          seen = ::iris::detail::atomic_load(arrived, relaxed, sys);
          return seen >= e - 1;
        },
        [&](unsigned long long waited) { one_way_absent(&block.call, q, seen, e - 1, waited); });
  }
  __syncthreads();
  block.call.begin_one_way();
  return block.call;
}

// The one-way side of a call that one_way_call set up: its block's routes, and the state for the arrival.
IRIS_DEVICE OneWay one_way(const Call& call) {
  const OneWayBlock& block = one_way_block();
  const Team& team = call.team;
  return OneWay{&block, &block.call, call.state, team.ctx.heap_bases, team.rank(), team.index, team.size};
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_LL_HPP
