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
// the protocol's bookkeeping, which would hold them back: the call's set-up and credits before the
// block's barrier, and after it the headers, the arrival and the call counter. The host launches data
// threads + kControlThreads.
constexpr int kControlThreads = 32;
// The most data threads a one-way block has (src/lua/iris/ccl.lua, ONE_WAY_THREADS), and the bound the
// kernels are compiled for: without it the compiler may use more registers than a block of 544 threads
// can have (seen on an H100: "at most 512 threads per block"). One block a multiprocessor is all a
// one-way grid needs: with the bound alone, NVRTC held the kernels to 56 registers and spilled the data
// path's values to local memory (ptxas -v, sm_90a); with "1 block" it takes what it needs (80 to 96).
constexpr int kMaxDataThreads = 512;
#define IRIS_CCL_ONE_WAY_KERNEL __launch_bounds__(544, 1)
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

// The spin of OneWay::receive_batch when a batch's lines were not all there at the first look: until
// every line of `missing` (line first + k step, k a bit of it) carries `flag`.
__device__ __noinline__ void wait_lines(const Call* call, const Line* lines, int first, int step, unsigned missing,
                                        uint32_t flag, int q) {
  for (int k = 0; missing >> k != 0u; ++k) {
    if (((missing >> k) & 1u) == 0) continue;
    const Line* line = lines + first + k * step;
    uint64_t data = 0;
    spin_until([&] { return line_load(line, flag, data); },
               [&](unsigned long long waited) { one_way_give_up(call, q, waited); });
  }
}

// What a block's threads read in the hot path, per member (by its index among the members, so that a
// thread finds it with one shared load): this call's slots, built once per block in shared memory by
// the control warp (one_way_call). Before, each thread recomputed them from the call state for every
// word it sent or received (dependent global loads of the pair epoch, the staging and the heap bases
// on every line) and kept the Call in local memory for the out-of-line reports (a 1 KiB stack written
// by every thread of every launch): docs/perf.md, "The fixed cost of a call".
struct Route {
  Line* to[2];          // this rank's slot in the member's heap, phases 0 and 1
  const Line* from[2];  // the member's slot in this rank's heap, phases 0 and 1
  uint64_t epoch;       // the pair epoch of this call with the member
  uintptr_t base;       // the member's heap, where this rank sees it (the arrival goes there)
  int rank;             // the member's global rank
};

// The block's copy of the call (what the reports and the headers read), its hash, and the routes.
struct OneWayBlock {
  Call call;
  uint64_t hash;  // call_hash of this rank's descriptor
  Route routes[kMaxRanks];
};

// The one instance per block (a __shared__ variable of a function has one per block and kernel).
IRIS_DEVICE OneWayBlock& one_way_block() {
  __shared__ OneWayBlock block;
  return block;
}

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
// 32 bits: a one-way run fits a slot of the staging (at most 2^19 words: ccl.lua, SLOT_DATA_MAX), and
// a grid has at most 512 blocks of 512 data threads; index arithmetic in 64 bits took registers that
// a one-way block, of 544 threads, does not have (about 96 each).
IRIS_DEVICE int global_thread() {
  return control_thread() ? 0x7fffffff : static_cast<int>(blockIdx.x) * data_threads() + thread_index();
}
IRIS_DEVICE int global_threads() { return static_cast<int>(gridDim.x) * data_threads(); }

// ---- batches: a data thread's words, kBatch at a time -------------------------------------------
// Global data thread g handles words g, g + threads, ... of a run, on every rank alike, kBatch of them
// at a time: every load of a batch (its input words, or its lines from one member) is issued before
// any of them is used, so a thread waits for memory once a batch, not once a word. (One word at a time,
// the volatile line access after a word kept the next word's load from starting: a thread of 2 words
// paid two memory latencies on each side.) The GPU rows take 2 words a thread (ccl.lua): one batch.
constexpr int kBatch = 2;

// Which of the words first, first + step, ... first + (kBatch - 1) step lie below count (none when
// first does not: the control warp's first word lies past any run).
IRIS_DEVICE unsigned batch_mask(int first, int step, int count) {
  if (first >= count) return 0;
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kBatch; ++k) {
    if (first + k * step < count) mask |= 1u << k;
  }
  return mask;
}

struct Batch {
  int first;      // its word k is first + k step
  int step;       // the grid's data threads
  int count;      // words of the run
  unsigned mask;  // bit k: word k lies in the run

  IRIS_DEVICE int word(int k) const { return first + k * step; }
  // On to the thread's next batch; false once past the run (the batch is then empty).
  IRIS_DEVICE bool next() {
    if (mask == 0) return false;
    first += kBatch * step;
    mask = batch_mask(first, step, count);
    return mask != 0;
  }
};

// The batch's words that lie in chunk c of chunks of `per` words (ll_two_shot's).
IRIS_DEVICE unsigned chunk_mask(const Batch& b, int per, int c) {
  const int lo = c * per, hi = lo + per;
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kBatch; ++k) {
    if (((b.mask >> k) & 1u) && b.word(k) >= lo && b.word(k) < hi) mask |= 1u << k;
  }
  return mask;
}

// The calling thread's first batch of a run of n elements of S.
template <class S>
IRIS_DEVICE Batch batches(int64_t n) {
  const int count = static_cast<int>(words_of<S>(n)), first = global_thread(), step = global_threads();
  return Batch{first, step, count, batch_mask(first, step, count)};
}

// The batch's words (those of `mask`) of a run of n elements at p, loaded at once; the others 0. (Every
// word of a batch is given a value on every path: a register read on a path that never set it is live
// from the kernel's start in the compilers' view, and such registers, dozens of them, had the kernel
// spill.)
template <class S>
IRIS_DEVICE void load_batch(const S* p, int64_t n, const Batch& b, unsigned mask, uint64_t (&x)[kBatch]) {
#pragma unroll
  for (int k = 0; k < kBatch; ++k) x[k] = (mask >> k) & 1u ? load_word(p, b.word(k), n) : 0;
}
template <class S>
IRIS_DEVICE void load_batch(const S* p, int64_t n, const Batch& b, uint64_t (&x)[kBatch]) {
  load_batch(p, n, b, b.mask, x);
}

template <class S>
IRIS_DEVICE void store_batch(S* p, int64_t n, const Batch& b, unsigned mask, const uint64_t (&x)[kBatch]) {
#pragma unroll
  for (int k = 0; k < kBatch; ++k) {
    if ((mask >> k) & 1u) store_word(p, b.word(k), n, x[k]);
  }
}
template <class S>
IRIS_DEVICE void store_batch(S* p, int64_t n, const Batch& b, const uint64_t (&x)[kBatch]) {
  store_batch(p, n, b, b.mask, x);
}

IRIS_DEVICE void copy_batch(const uint64_t (&from)[kBatch], uint64_t (&to)[kBatch]) {
#pragma unroll
  for (int k = 0; k < kBatch; ++k) to[k] = from[k];
}

// A batch's reduction in member order: fold(i, ...) takes member i's words (those of `mask`). Where
// the accumulator is the element type (every type but float16 and bfloat16) the running result is
// kept as words, undone and redone at each step: the transforms are exact involutions and the
// combining is the same, so the bits are those of an accumulation in place, and a batch of 1-byte
// elements holds 2 registers a word instead of 8 (a one-way kernel's block has 544 threads: about
// 96 registers each, which the accumulators of a batch of bytes overran).
template <class S, bool Words = is_same<typename accumulator<S>::type, S>::value>
struct BatchValues {
  uint64_t w[kBatch] = {};

  IRIS_DEVICE void fold(int i, unsigned mask, const uint64_t (&x)[kBatch], const Reduction& r) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (((mask >> k) & 1u) == 0) continue;
      if (i == 0) {
        w[k] = x[k];
      } else {
        WordValues<S> a;
        a.load(w[k], r);
        a.combine(x[k], r);
        w[k] = a.word(r);
      }
    }
  }
  IRIS_DEVICE void words(unsigned mask, const Reduction&, uint64_t (&x)[kBatch]) const {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if ((mask >> k) & 1u) x[k] = w[k];
    }
  }
};

template <class S>
struct BatchValues<S, false> {
  WordValues<S> v[kBatch] = {};

  IRIS_DEVICE void fold(int i, unsigned mask, const uint64_t (&x)[kBatch], const Reduction& r) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (((mask >> k) & 1u) == 0) continue;
      if (i == 0) {
        v[k].load(x[k], r);
      } else {
        v[k].combine(x[k], r);
      }
    }
  }
  IRIS_DEVICE void words(unsigned mask, const Reduction& r, uint64_t (&x)[kBatch]) const {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if ((mask >> k) & 1u) x[k] = v[k].word(r);
    }
  }
};

// ---- a one-way call ------------------------------------------------------------------------------

// The one-way side of a call: its block's routes and call (shared memory, found through the __shared__
// variable itself, so that the compilers address it as shared memory), this rank's state, and where it
// stands among the members (from the kernel's arguments). Members are named by their index among the
// members; a route carries the global rank. Small: the kernels pass it by value to each element type's
// code, a function of its own, in registers (a larger one went through local memory).
struct OneWay {
  CallState* state;
  uint64_t members;  // bit r: rank r takes part
  int me;            // this rank
  int index;         // this rank's position among the members
  int size;          // members

  IRIS_DEVICE static OneWayBlock& block() { return one_way_block(); }
  IRIS_DEVICE static const Call* call() { return &one_way_block().call; }
  IRIS_DEVICE static const Route& route(int j) { return one_way_block().routes[j]; }
  IRIS_DEVICE static int rank(int j) { return route(j).rank; }
  IRIS_DEVICE static uint32_t flag(int j) { return static_cast<uint32_t>(route(j).epoch); }

  // The member i places after this rank (rotated order: each rank starts with a different peer).
  IRIS_DEVICE int peer(int i) const {
    const int j = index + i;
    return j >= size ? j - size : j;
  }
  // The index of the member of global rank r.
  IRIS_DEVICE int index_of(int r) const { return __popcll(members & ((1ull << r) - 1ull)); }

  // The block's one barrier, once the data threads have loaded their first batch: after it every
  // thread may read the routes and send (the control warp took every credit before it).
  IRIS_DEVICE void start() const { __syncthreads(); }

  // The control warp's work after the barrier, while the data threads send and receive: in block 0
  // the headers and the arrival, in the last block the next call's pair epochs, in every block its
  // part of the call counter (every thread of the block read the counter, if at all, before the
  // barrier); then (finish) in block 0 the check of every member's header. A collective calls finish
  // at its end, where the control warp arrives straight after the barrier (it takes no word, so every
  // loop of the data path is empty for it): there no value of the data path is live, which the calls
  // of the control warp's code (its reports) would otherwise have the compilers keep in local memory.
  IRIS_DEVICE void announce() const {
    const Call& c = *call();
    if (blockIdx.x == 0) send_headers();
    if (c.last_block()) c.account(0, control_lane(), kControlThreads);
    if (control_lane() == 0) c.count();
  }
  // `announced`: wait_members did the first part already.
  IRIS_DEVICE void finish(bool announced = false) const {
    if (!control_thread()) return;
    if (!announced) announce();
    if (blockIdx.x == 0) check_headers();
  }

  // Until the member of global rank q has arrived at least at `epoch` (its own call `epoch`, with this
  // rank, has started).
  IRIS_DEVICE void wait_arrived(int q, uint64_t e) const {
    const uint64_t* slot = &state->arrived[q];
    uint64_t seen = 0;
    const Call* c = call();
    spin_until(
        [&] {
          seen = ::iris::detail::atomic_load(slot, relaxed, sys);
          return seen >= e;
        },
        [&](unsigned long long waited) { one_way_absent(c, q, seen, e, waited); });
  }

  // Until every member but this rank and member `heard` (one whose lines this rank waits for anyway:
  // they come from its call) has started this call: the control warp announces this rank's call (the
  // others wait for it as this rank waits for theirs) and waits, the block goes on together. With no
  // member to wait for (2 members, the other one heard) no barrier either. Whether it announced: pass
  // it to finish.
  IRIS_DEVICE bool wait_members(int heard = -1) const {
    if (size - 1 - (heard >= 0 && heard != index ? 1 : 0) <= 0) return false;
    if (control_thread()) {
      announce();
      for (int j = control_lane(); j < size; j += kControlThreads) {
        if (j != index && j != heard) wait_arrived(rank(j), route(j).epoch);
      }
    }
    __syncthreads();
    return true;
  }

  // The words of `mask` of a batch into member j's slot, word w at data line w - shift.
  IRIS_DEVICE void send_batch(int j, int phase, const Batch& b, int shift, unsigned mask,
                              const uint64_t (&x)[kBatch]) const {
    const Route& r = route(j);
    Line* lines = r.to[phase] + kHeaderLines;
    const uint32_t f = static_cast<uint32_t>(r.epoch);
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if ((mask >> k) & 1u) line_store(lines + (b.word(k) - shift), x[k], f);
    }
  }

  // The same words from member j's slot in this rank's heap: every line of the batch is fetched before
  // any is looked at; those not there yet are waited for out of line (one copy of the spin's code for
  // every call site, so the kernel's hot path stays short: its instruction fetches were a large part of
  // a small call's time, docs/perf.md "The fixed cost of a call"), then read again.
  IRIS_DEVICE void receive_batch(int j, int phase, const Batch& b, int shift, unsigned mask,
                                 uint64_t (&x)[kBatch]) const {
    const Route& r = route(j);
    const Line* lines = r.from[phase] + kHeaderLines;
    const uint32_t f = static_cast<uint32_t>(r.epoch);
    Line v[kBatch] = {};
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if ((mask >> k) & 1u) line_fetch(lines + (b.word(k) - shift), v[k]);
    }
    unsigned missing = 0;
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      x[k] = 0;
      if (((mask >> k) & 1u) && !line_holds(v[k], f, x[k])) missing |= 1u << k;
    }
    if (missing == 0) return;
    wait_lines(call(), lines, b.first - shift, b.step, missing, f, r.rank);
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if ((missing >> k) & 1u) line_load(lines + (b.word(k) - shift), f, x[k]);  // there now
    }
  }

  // Block 0's control warp: the header to every member (line 0 the hash, then the descriptor a word a
  // line), then the arrival (relaxed: it only says that this call has started, and no fence holds the
  // kernel back).
  IRIS_DEVICE void send_headers() const {
    const OneWayBlock& blk = block();
    const int lines = 1 + kDescriptorLines;
    // The descriptor's words from shared memory, its epoch (word 1: CallDescriptor) the pair epoch with
    // the member.
    const uint64_t* words = reinterpret_cast<const uint64_t*>(&blk.call.mine);
    for (int i = control_lane(); i < size * lines; i += kControlThreads) {
      const int j = i / lines, line = i % lines;
      if (j == index) continue;
      const Route& r = blk.routes[j];
      const uint64_t word = line == 0 ? blk.hash : line == 2 ? r.epoch : words[line - 1];
      line_store(r.to[0] + line, word, static_cast<uint32_t>(r.epoch));
    }
    // Every lane's lines are out before any lane may report a mismatch (which ends the kernel): a peer
    // that finds a different hash reads this rank's descriptor lines, and must find them all.
    __syncwarp();
    // The heap offset of this rank's slot in the members' `arrived`.
    const uintptr_t arrived =
        IRIS_CCL_STATE_OFFSET + (reinterpret_cast<uintptr_t>(&state->arrived[me]) - reinterpret_cast<uintptr_t>(state));
    for (int j = control_lane(); j < size; j += kControlThreads) {
      if (j == index) continue;
      const Route& r = blk.routes[j];
      ::iris::detail::atomic_store(reinterpret_cast<uint64_t*>(r.base + arrived), r.epoch, relaxed, sys);
    }
  }

  // Every member's header checked (block 0's control warp, last).
  IRIS_DEVICE void check_headers() const {
    for (int j = control_lane(); j < size; j += kControlThreads) {
      if (j != index) check_header(j);
    }
  }

  IRIS_DEVICE void check_header(int j) const {
    const Route& r = route(j);
    const Line* line = r.from[0];
    const uint32_t f = static_cast<uint32_t>(r.epoch);
    const uint64_t e = r.epoch;
    const int q = r.rank;
    const Call* c = call();
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
    if (theirs != block().hash) one_way_mismatch(c, q);
  }
};

// What the control warp loads for member i's route, every address from the kernel's arguments.
struct RouteLoads {
  int q;               // member i's global rank
  uint64_t epochs[2];  // pair_epoch[0][q] and pair_epoch[1][q]
  uint64_t arrived;    // q's arrival (this rank: all ones, no credit to take)
  uintptr_t base;      // q's heap, where this rank sees it
};

IRIS_DEVICE RouteLoads route_loads(const Team& members, const CallState* state, int i) {
  RouteLoads l;
  l.q = members.rank_of(i);
  const bool mine = l.q == members.rank();
  // Both parities, as atomics: neither waits for the call counter that chooses between them (two plain
  // loads and a select may be compiled into one load at the chosen address, which would).
  l.epochs[0] = ::iris::detail::atomic_load(&state->pair_epoch[0][l.q], relaxed, gpu);
  l.epochs[1] = ::iris::detail::atomic_load(&state->pair_epoch[1][l.q], relaxed, gpu);
  l.arrived = mine ? ~0ull : ::iris::detail::atomic_load(&state->arrived[l.q], relaxed, sys);
  l.base = mine ? own_heap_base(members.ctx) : static_cast<uintptr_t>(members.ctx.heap_bases[l.q]);
  return l;
}

// The call around the data; every thread of the block calls it first. The control warp sets the call
// up in the block's shared OneWayBlock before the block's barrier (OneWay::start) while the data
// threads load their first words. The set-up is one round of loads, issued at once from addresses the
// kernel's arguments give (the call counter, the staging's place, and per member both parities of its
// pair epoch, its arrival and its heap base; this rank's heap base is the Context's table pointer,
// own_heap_base): lane 0 then writes the call's descriptor and hash, and lane i member i's route (this
// call's slots in the member's heap and in its own, from the pair epoch). The credits: a sender writes
// the slot of parity e % 2 at pair epoch e only once the receiver arrived at e - 1 (it is done with
// the slot; usually long since, so the arrival already loaded shows it); one not there yet is waited
// for after the warp's __syncwarp, since a report of that wait reads the call lane 0 wrote. The call
// counter and the next call's pair epochs are written after the barrier (OneWay::announce). Before,
// thread 0 made the call, then loaded the heap base, the counter and the pair epoch one after the
// other, and every thread waited for that at the barrier (docs/perf.md, "The fixed cost of a call,
// again").
IRIS_DEVICE OneWay one_way_call(const iris::Context& ctx, const char* name, int collective, uint32_t group_lo,
                                uint32_t group_hi, int variant, int dtype, int op, int root, long count, const void* a,
                                const void* b) {
  // The one-way kernels are IRIS_EARLY_START: nothing below reads memory before the kernel ahead ends.
  ::iris::detail::wait_for_earlier_kernels();
  ::iris::detail::allow_later_kernels();
  OneWayBlock& block = one_way_block();
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  const Team members = team(ctx, group);
  CallState* state = call_state(ctx);
  const OneWay ll{state, group, ctx.rank, members.index, members.size};
  if (!control_thread()) return ll;
  const int lane = control_lane(), me = ctx.rank;
  const uintptr_t own = own_heap_base(ctx);
  // Plain reads of what earlier kernels (Call::count, Call::account) and iris.init wrote.
  const uint64_t calls = state->calls;
  const uint64_t staging_offset = state->staging, slot_bytes = state->slot_bytes;
  RouteLoads next = {};
  if (lane < members.size) next = route_loads(members, state, lane);
  if (lane == 0) {  // (its shared stores come after the loads above, which they could hold back)
    const Call c = make_call(ctx, calls + 1, name, collective, group, variant, dtype, op, root,
                             static_cast<uint64_t>(count), 1, 1, 0, 0, {a, count}, {b, count});
    block.hash = call_hash(c.mine);
    block.call = c;
  }
  const Staging staging{reinterpret_cast<unsigned char*>(own + staging_offset), slot_bytes};
  uint64_t owed = 0;  // bit k: the k-th member this lane took has not given its credit yet
  int k = 0;
  for (int i = lane; i < members.size; i += kControlThreads, ++k) {
    const RouteLoads l = next;
    if (i + kControlThreads < members.size) next = route_loads(members, state, i + kControlThreads);
    const uint64_t e = l.epochs[calls & 1] + 1;  // Call::epoch_with: parity (seq - 1) % 2, seq = calls + 1
    Route& r = block.routes[i];
    r.epoch = e;
    r.base = l.base;
    r.rank = l.q;
    for (int phase = 0; phase < 2; ++phase) {
      r.to[phase] = reinterpret_cast<Line*>(l.base + (reinterpret_cast<uintptr_t>(staging.slot(me, e, phase)) - own));
      r.from[phase] = staging.slot(l.q, e, phase);
    }
    if (l.arrived < e - 1) owed |= 1ull << k;
  }
  __syncwarp();
  k = 0;
  for (int i = lane; owed != 0 && i < members.size; i += kControlThreads, ++k) {
    if (((owed >> k) & 1u) == 0) continue;
    ll.wait_arrived(block.routes[i].rank, block.routes[i].epoch - 1);
  }
  return ll;
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_LL_HPP
