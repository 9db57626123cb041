// Point to point: ctx.ccl.send and ctx.ccl.recv (kernels/ccl/send.hip, recv.hip; docs/collectives.md,
// "Point to point"). Included by those kernels, not by user snippets.
//
// Matching. The k-th send from rank p to rank q is the k-th recv on q from p: each direction of each
// pair has its own count (P2pState::sent on the sender, received on the receiver), apart from the call
// protocol's pair epochs, so sends and recvs never wait for the collectives between the same ranks, and
// two ranks may both send before they receive.
//
// Eager messages (variant ll). The sender writes message k into slot k % IRIS_CCL_P2P_SLOTS of the
// receiver's inbox for it (its region after the one-way staging, impl/ccl_lines.hpp: Staging::end), as
// one-way lines {data, k}: a header (line 0 the hash of what must match, then the message's
// description a word a line) and the data. It waits for nothing but its credit: the receiver's recv
// k - IRIS_CCL_P2P_SLOTS, which read the same slot, has ended (`consumed`, which the receiver writes
// into the sender's counters). So a send never needs its own recv posted, and up to IRIS_CCL_P2P_SLOTS
// messages to one rank can wait for their recvs.
//
// Pulled messages (variant pull). The header alone, with where the sender's tensor is; the receiver
// copies it from the sender's heap and says so (`consumed`), which is what the send waits for before it
// ends: such a send needs its recv posted.
//
// Between nodes (docs/multinode.md). A peer on another node is reachable only through the host proxy
// (impl/remote.hpp), whose transfers move bytes, not one-way lines, and have completed at their target
// when they return. So there the slot is written in order instead: the data as plain bytes (the
// message's elements one after another) from kHeaderLines lines on, and header words 1 to 1 + kP2pWords
// (the hash, then P2pHeader), each put through the proxy; then, once every block's puts have
// returned, word 0 of the slot (the flag, p2p_remote_flag) := k with signal_set. The receiver waits
// for its own slot's flag, then reads the rest with plain loads. A pulled message is copied by the
// receiver's threads straight from the sender's tensor through the proxy (p2p_remote_copy).
//
// Mismatches. The receiver compares the header's hash with its own (count and dtype, both ranks); when
// they differ it reports both sides. A recv that waits too long for its message, and a send that waits
// too long for its credit, report whom they waited for.
#ifndef IRIS_IMPL_CCL_P2P_HPP
#define IRIS_IMPL_CCL_P2P_HPP

#include <iris/impl/ccl_ll.hpp>

namespace iris {
namespace ccl {
namespace detail {

constexpr int kP2pSlots = IRIS_CCL_P2P_SLOTS;

// At the start of every rank's point-to-point region. Indexed by global rank q.
struct P2pState {
  uint64_t sent[kMaxRanks];      // own: messages this rank sent to q
  uint64_t received[kMaxRanks];  // own: messages from q this rank received
  uint64_t consumed[kMaxRanks];  // written by q (release): q has received this rank's messages up to this one
  uint32_t finished;             // own: blocks of the running send or recv that have ended
  uint32_t reserved;
};
static_assert(sizeof(P2pState) <= IRIS_CCL_P2P_STATE_BYTES, "the point-to-point counters must fit their room");

// The words of a message's header after its hash (lines 1 to kP2pWords of its slot).
struct P2pHeader {
  uint64_t count;   // elements
  uint64_t kind;    // dtype | variant << 8
  uint64_t offset;  // pull: the sender's tensor, as a heap offset
  int64_t rows, cols, stride;  // pull: the sender's view of it
};
constexpr int kP2pWords = static_cast<int>(sizeof(P2pHeader) / 8);
static_assert(1 + kP2pWords <= kHeaderLines, "a message's header fits the header lines of its slot");

IRIS_DEVICE P2pHeader header_of(const uint64_t* words) {
  P2pHeader h;
  uint64_t* to = reinterpret_cast<uint64_t*>(&h);
  for (int i = 0; i < kP2pWords; ++i) to[i] = words[i];
  return h;
}

// What a send and its recv must agree on: the elements and their dtype (and who sends to whom).
IRIS_DEVICE uint64_t p2p_hash(uint64_t count, int dtype, int from, int to) {
  return mix(mix(mix(count, static_cast<uint64_t>(dtype)), static_cast<uint64_t>(from)), static_cast<uint64_t>(to));
}

// A rows x cols view (row stride `stride`) read as the run of its n elements in row-major order, 8 bytes
// of elements a word: word w holds elements [w * per, (w + 1) * per), the last one maybe short.
template <class S>
struct Flat {
  S* ptr;
  int64_t cols, stride, n;

  IRIS_DEVICE S* at(int64_t i) const { return ptr + (i / cols) * stride + i % cols; }
  // The word's elements when they are whole and lie in one row on an 8-byte boundary, else null.
  IRIS_DEVICE S* whole(int64_t w) const {
    constexpr int64_t per = 8 / sizeof(S);
    const int64_t first = w * per, col = first % cols;
    if (first + per > n || col + per > cols) return nullptr;
    S* p = ptr + (first / cols) * stride + col;
    return (reinterpret_cast<uintptr_t>(p) & 7u) == 0 ? p : nullptr;
  }
  IRIS_DEVICE uint64_t load(int64_t w) const {
    constexpr int per = 8 / sizeof(S);
    typedef typename unsigned_of<sizeof(S)>::type U;
    if (const S* p = whole(w)) return *reinterpret_cast<const uint64_t*>(p);
    uint64_t x = 0;
    for (int j = 0; j < per && w * per + j < n; ++j) {
      x |= static_cast<uint64_t>(::iris::detail::bit_cast<U>(*at(w * per + j))) << (8 * sizeof(S) * j);
    }
    return x;
  }
  IRIS_DEVICE void store(int64_t w, uint64_t x) const {
    constexpr int per = 8 / sizeof(S);
    typedef typename unsigned_of<sizeof(S)>::type U;
    if (S* p = whole(w)) {
      *reinterpret_cast<uint64_t*>(p) = x;
      return;
    }
    for (int j = 0; j < per && w * per + j < n; ++j) {
      *at(w * per + j) = ::iris::detail::bit_cast<S>(static_cast<U>(x >> (8 * sizeof(S) * j)));
    }
  }
};

// One send or recv between this rank and `peer`: message number k of its direction.
struct P2p {
  Context ctx;
  P2pState* state;        // this rank's
  unsigned char* region;  // this rank's point-to-point region (its counters, then its inboxes)
  uint64_t slot_bytes;
  int me, peer;
  uint64_t k;
  const char* name;  // "ctx.ccl.send"

  IRIS_DEVICE uint32_t flag() const { return static_cast<uint32_t>(k); }
  // The slot message k from `source` lands in, in this rank's region.
  IRIS_DEVICE Line* inbox(int source) const {
    const uint64_t index = static_cast<uint64_t>(source) * kP2pSlots + k % kP2pSlots;
    return reinterpret_cast<Line*>(region + IRIS_CCL_P2P_STATE_BYTES + index * slot_bytes);
  }
  // The slot this rank's message k lands in, in the peer's region.
  IRIS_DEVICE Line* outbox() const { return ::iris::translate(inbox(me), me, peer, ctx.heap_bases); }
  IRIS_DEVICE P2pState* peer_state() const { return ::iris::translate(state, me, peer, ctx.heap_bases); }

  // The last block to end, whichever it is, counts the message (every block read the count when it
  // started, as Call::finish does for the collectives); `after` runs there first.
  template <class After>
  IRIS_DEVICE void finish(uint64_t* count, After after) const {
    __syncthreads();
    if (thread_index() != 0) return;
    if (gridDim.x > 1) {
      const unsigned int ended = ::iris::detail::fetch_add(&state->finished, 1u, acq_rel, gpu);
      if (ended != gridDim.x - 1) return;
      state->finished = 0;
    }
    after();
    ::iris::detail::atomic_store(count, k, relaxed, gpu);
  }
};

IRIS_DEVICE P2p p2p(const Context& ctx, int peer, bool sending, const char* name) {
  // send and recv are IRIS_EARLY_START: nothing below reads memory before the kernel ahead ends.
  ::iris::detail::wait_for_earlier_kernels();
  ::iris::detail::allow_later_kernels();
  const uintptr_t base = static_cast<uintptr_t>(ctx.heap_bases[ctx.rank]);
  const CallState* calls = reinterpret_cast<const CallState*>(base + IRIS_CCL_STATE_OFFSET);
  const Staging staging{reinterpret_cast<unsigned char*>(base + calls->staging), calls->slot_bytes};
  P2p p;
  p.ctx = ctx;
  p.region = staging.end(ctx.world_size);
  p.state = reinterpret_cast<P2pState*>(p.region);
  p.slot_bytes = calls->slot_bytes;
  p.me = ctx.rank;
  p.peer = peer;
  p.k = (sending ? p.state->sent[peer] : p.state->received[peer]) + 1;  // plain: an earlier kernel wrote it
  p.name = name;
  return p;
}

// ---- reports (out of line: rare, and long) ------------------------------------------------------------

IRIS_DEVICE void put_message(Text& text, uint64_t count, int dtype) {
  text.put(count);
  text.put(" ");
  text.put(dtype_name(dtype));
  text.put(count == 1 ? " element" : " elements");
}

[[noreturn]] __device__ __noinline__ void p2p_mismatch(const P2p& p, const P2pHeader& theirs, uint64_t count,
                                                       int dtype) {
  // (The numbers of the call protocol are the collectives'; a message's number is in the text.)
  report(0, 0, p.peer, [&](Text& text) {
    text.put("ctx.ccl.send/recv: rank ");
    text.put(p.peer);
    text.put(" sent ");
    put_message(text, theirs.count, static_cast<int>(theirs.kind & 0xff));
    text.put(" to rank ");
    text.put(p.me);
    text.put(", rank ");
    text.put(p.me);
    text.put(" received ");
    put_message(text, count, dtype);
    text.put(" from rank ");
    text.put(p.peer);
    text.put(" (message ");
    text.put(p.k);
    text.put(" from rank ");
    text.put(p.peer);
    text.put(" to rank ");
    text.put(p.me);
    text.put(": a send and its recv need the same size and dtype)");
  });
}

// A recv that waited too long for its message.
[[noreturn]] __device__ __noinline__ void p2p_not_sent(const P2p& p, unsigned long long waited_ns) {
  const uint64_t* theirs = &p.peer_state()->sent[p.me];
  const uint64_t sent = ::iris::detail::is_remote(theirs) ? ::iris::detail::remote_load(theirs)
                                                          : ::iris::detail::atomic_load(theirs, relaxed, sys);
  report(0, 0, p.peer, [&](Text& text) {
    text.put("ctx.ccl.recv on rank ");
    text.put(p.me);
    text.put(": rank ");
    text.put(p.peer);
    text.put(" did not send it within ");
    text.put(static_cast<uint64_t>(waited_ns / 1000000000ull));
    text.put(" s (this is recv number ");
    text.put(p.k);
    text.put(" from rank ");
    text.put(p.peer);
    text.put("; rank ");
    text.put(p.peer);
    text.put(" has sent ");
    text.put(sent);
    text.put(sent == 1 ? " message" : " messages");
    text.put(" to rank ");
    text.put(p.me);
    text.put(")");
  }, waited_ns);
}

// A send that waited too long for the receiver: for its credit (`needed` = k - slots), or for its own
// recv (a pulled message, `needed` = k).
[[noreturn]] __device__ __noinline__ void p2p_not_received(const P2p& p, uint64_t needed, uint64_t seen,
                                                           unsigned long long waited_ns) {
  report(0, 0, p.peer, [&](Text& text) {
    text.put("ctx.ccl.send on rank ");
    text.put(p.me);
    text.put(": rank ");
    text.put(p.peer);
    text.put(" did not receive message ");
    text.put(needed);
    text.put(" from rank ");
    text.put(p.me);
    text.put(" within ");
    text.put(static_cast<uint64_t>(waited_ns / 1000000000ull));
    text.put(" s (it received ");
    text.put(seen);
    text.put("; this is send number ");
    text.put(p.k);
    if (needed == p.k) {
      text.put(", variant pull: such a send waits for its recv");
    } else {
      text.put(": at most ");
      text.put(static_cast<uint64_t>(kP2pSlots));
      text.put(" messages to one rank wait for their recvs, the next send waits for the first of them");
    }
    text.put(")");
  }, waited_ns);
}

// Until the peer has received this rank's messages up to `needed` (its recvs write `consumed`).
IRIS_DEVICE void wait_consumed(const P2p& p, uint64_t needed) {
  const uint64_t* slot = &p.state->consumed[p.peer];
  uint64_t seen = 0;
  ::iris::detail::bounded_spin(
      [&] {
        seen = ::iris::detail::atomic_load(slot, acquire, sys);
        return seen >= needed;
      },
      [&](unsigned long long waited) { p2p_not_received(p, needed, seen, waited); });
}

// ---- between nodes ---------------------------------------------------------------------------------

// Whether the peer is on another node (its inbox is reached through the host proxy).
IRIS_DEVICE bool p2p_remote(const P2p& p) { return ::iris::detail::is_remote(p.outbox()); }

// Word 0 of a slot between nodes: the number of the message it holds, written last.
IRIS_DEVICE uint64_t* p2p_remote_flag(Line* slot) { return reinterpret_cast<uint64_t*>(slot); }
// Words 1 to 1 + kP2pWords: the hash, then the header.
IRIS_DEVICE uint64_t* p2p_remote_header(Line* slot) { return reinterpret_cast<uint64_t*>(slot) + 1; }

// Elements [0, n) of a view of this process (`local`: `lc` columns, row stride `ls`, in elements of
// `size` bytes) to or from (`op`: IRIS_PROXY_PUT or IRIS_PROXY_GET) a view in the heap of a rank on
// another node (`remote`, a tagged address: `rc` columns, row stride `rs`), element i to element i.
// Each thread of the grid takes windows of at least 256 KiB (as remote_block's slices: few, large
// transfers) and posts one request per run that is contiguous on both sides; each has completed at its
// target when this returns.
__device__ __noinline__ void p2p_remote_copy(unsigned int op, const unsigned char* local, int64_t lc, int64_t ls,
                                             const unsigned char* remote, int64_t rc, int64_t rs, int64_t n,
                                             int64_t size) {
  const int64_t threads = static_cast<int64_t>(gridDim.x) * thread_count();
  const int64_t me = static_cast<int64_t>(blockIdx.x) * thread_count() + thread_index();
  int64_t window = (n + threads - 1) / threads;
  if (window * size < 262144) window = (262144 + size - 1) / size;
  const int rank = ::iris::detail::remote_rank(remote);
  const unsigned long long base = ::iris::detail::remote_offset(remote);
  for (int64_t start = me * window; start < n; start += threads * window) {
    const int64_t end = start + window < n ? start + window : n;
    for (int64_t f = start; f < end;) {
      int64_t run = end - f;
      if (lc - f % lc < run) run = lc - f % lc;
      if (rc - f % rc < run) run = rc - f % rc;
      const int64_t at_local = (f / lc) * ls + f % lc, at_remote = (f / rc) * rs + f % rc;
      ::iris::detail::RemoteRequest r{op, 0u, 0u, rank, base + static_cast<unsigned long long>(at_remote * size),
                                      static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(local + at_local * size)),
                                      static_cast<unsigned long long>(run * size), {0ull, 0ull}};
      ::iris::detail::remote_call(r);
      f += run;
    }
  }
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_P2P_HPP
