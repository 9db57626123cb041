// The protocol of the host collectives (ctx.ccl; docs/collectives.md "The call protocol"): arrivals
// with call descriptors, mismatch reports, per-block progress and deliveries, all as epochs in the
// runtime scratch region of every heap. Included by kernels/ccl/*.hip, not by user snippets.
#ifndef IRIS_IMPL_CCL_CALL_HPP
#define IRIS_IMPL_CCL_CALL_HPP

#include <iris/impl/ccl_lines.hpp>

namespace iris {
namespace ccl {
namespace detail {

// The limits and codes are impl/abi.h's, which the Lua side reads too.
constexpr int kMaxRanks = IRIS_MAX_RANKS;
constexpr int kMaxBlocks = IRIS_MAX_BLOCKS;
constexpr int kLocks = IRIS_CCL_LOCKS;

// What a rank called, as it tells each member at arrival. Two calls match when everything but `seq`
// and `epoch` is equal. The fused ops (ctx.ops, impl/ops_call.hpp) describe M x N x K instead.
struct CallDescriptor {
  uint64_t seq;     // the caller's call number (its own count of ctx.ccl and ctx.ops calls, kept on the device)
  uint64_t epoch;   // the pair epoch with the rank it is written to (word 1: OneWay::send_headers)
  uint64_t count;   // elements of the caller's input (ops: K)
  uint64_t rows;    // rows of the view the kernel tiles, 1 for 1-D (ops: M)
  uint64_t cols;    // 0 (ops: N)
  uint64_t group;   // members
  uint64_t layout;  // hash of the tensors' heap offsets and strides
  uint32_t kind;    // collective | variant << 8 | dtype << 16 | op << 24
  int32_t root;
  uint32_t tiling;  // block_m << 16 | block_n
  uint32_t grid;    // blocks << 8 | dim
};

// One per heap at IRIS_CCL_STATE_OFFSET. Indexed by global rank q: written by q unless marked own.
struct CallState {
  uint64_t staging;                                 // host, at iris.init: the one-way staging's heap offset (0: none)
  uint64_t slot_bytes;                              // host: bytes of one slot of it (impl/ccl_ll.hpp)
  uint64_t calls;                                   // own: this rank's calls so far (the last block of each adds 1)
  uint32_t finished;                                // own: blocks of the running call that have ended
  uint32_t reserved;
  uint64_t arrived[kMaxRanks];                      // the pair epoch q arrived at (release)
  uint64_t delivered[kMaxRanks];                    // blocks of q done with this rank's memory (release add)
  uint64_t pair_epoch[2][kMaxRanks];                // own: calls made with q, after call s in [s % 2]
  uint64_t expected[2][kMaxRanks];                  // own: deliveries from q accounted for, likewise
  uint64_t progress[kMaxBlocks];                    // own, read by peers: block b's seq << 32 | step
  uint32_t locks[kLocks];                           // spinlock: 0 free, 1 held
  CallDescriptor descriptors[kMaxRanks][2];         // q's call at pair epoch e, in [e % 2]
};
static_assert(sizeof(CallState) <= IRIS_CCL_STATE_BYTES, "the collectives' state must fit its region");
static_assert(sizeof(CallDescriptor) == 72, "a one-way call sends its descriptor as 9 words (impl/ccl_ll.hpp)");

// all_reduce_call, ..., matmul_reduce_scatter_call: IRIS_COLLECTIVE_CODES's ids.
#define IRIS_CCL_COLLECTIVE_ENUMERATOR(name, id, family, variants) name##_call = id,
enum Collective : int { IRIS_COLLECTIVE_CODES(IRIS_CCL_COLLECTIVE_ENUMERATOR) };
#undef IRIS_CCL_COLLECTIVE_ENUMERATOR
// Whether a collective is a fused op (ctx.ops): its family in IRIS_COLLECTIVE_CODES.
IRIS_DEVICE bool is_op(int collective) {
#define IRIS_CCL_FAMILY_CASE(name, id, family, variants) \
  case id: return IRIS_FAMILY_##family == IRIS_FAMILY_ops;
  switch (collective) { IRIS_COLLECTIVE_CODES(IRIS_CCL_FAMILY_CASE) default: return false; }
#undef IRIS_CCL_FAMILY_CASE
}

// ---- reports ---------------------------------------------------------------------------------------

using ::iris::detail::Text;

// The names of the codes the kernels receive and describe (impl/abi.h's lists, which Lua reads too).
#define IRIS_CCL_NAME_CASE(name, code, ...) \
  case code: return #name;
IRIS_DEVICE const char* collective_name(int c) {
  switch (c) { IRIS_COLLECTIVE_CODES(IRIS_CCL_NAME_CASE) default: return "?"; }
}
IRIS_DEVICE const char* dtype_name(int d) {
  switch (d) { IRIS_DTYPE_CODES(IRIS_CCL_NAME_CASE) default: return "?"; }
}
IRIS_DEVICE const char* variant_name(int v) {
  switch (v) { IRIS_VARIANT_CODES(IRIS_CCL_NAME_CASE) default: return "?"; }
}
IRIS_DEVICE const char* op_name(int o) {
  switch (o) { IRIS_REDUCTION_CODES(IRIS_CCL_NAME_CASE) default: return "?"; }
}
#undef IRIS_CCL_NAME_CASE

IRIS_DEVICE void put_group(Text& text, uint64_t group) {
  text.put("group {");
  bool first = true;
  for (int r = 0; r < kMaxRanks; ++r) {
    if ((group >> r) & 1u) {
      if (!first) text.put(", ");
      text.put(r);
      first = false;
    }
  }
  text.put("}");
}

// Every field of the two calls but the tensors' layout agrees.
IRIS_DEVICE bool same_but_layout(const CallDescriptor& a, const CallDescriptor& b) {
  return a.count == b.count && a.rows == b.rows && a.cols == b.cols && a.group == b.group && a.kind == b.kind &&
         a.root == b.root && a.tiling == b.tiling && a.grid == b.grid;
}

// "1024 float32 elements (sum)" (ops: "64 x 48 x 32 float16 (M x N x K)"), with whatever else differs
// from `other` in the parentheses.
__device__ __noinline__ void describe(Text& text, const CallDescriptor& d, const CallDescriptor& other) {
  const int collective = d.kind & 0xff, variant = (d.kind >> 8) & 0xff, dtype = (d.kind >> 16) & 0xff;
  const int op = static_cast<int>(d.kind >> 24);
  if (is_op(collective)) {
    text.put(d.rows);
    text.put(" x ");
    text.put(d.cols);
    text.put(" x ");
    text.put(d.count);
    text.put(" ");
    text.put(dtype_name(dtype));
    text.put(" (M x N x K");
  } else {
    text.put(d.count);
    text.put(" ");
    text.put(dtype_name(dtype));
    text.put(d.count == 1 ? " element" : " elements");
  }
  // The shape of the work is worth naming only between calls of one collective.
  const bool alike = collective == static_cast<int>(other.kind & 0xff);
  if (d.rows != other.rows && alike && !is_op(collective)) {
    text.put(" as ");
    text.put(d.rows);
    text.put(" rows");
  }
  if (!is_op(collective)) text.put(" (");
  const bool reduces = collective == all_reduce_call || collective == reduce_scatter_call || collective == reduce_call;
  const bool rooted = collective == broadcast_call || collective == reduce_call || collective == gather_call ||
                      collective == scatter_call;
  if (reduces) text.put(op_name(op));
  if (rooted) {
    text.put(reduces ? ", root " : "root ");
    text.put(d.root);
  }
  bool first = !reduces && !rooted && !is_op(collective);
  auto next = [&]() {
    if (!first) text.put(", ");
    first = false;
  };
  if (((d.kind ^ other.kind) >> 8 & 0xff) != 0 && alike) {
    next();
    text.put("variant ");
    text.put(variant_name(variant));
  }
  if ((d.grid & 0xff) != (other.grid & 0xff) && alike) {
    next();
    text.put("dim ");
    text.put(static_cast<uint64_t>(d.grid & 0xff));
  }
  if (d.group != other.group) {
    next();
    put_group(text, d.group);
  }
  // Tiles and blocks are worth naming only between calls of one variant (a one-way call has no tiles).
  const bool same_variant = alike && ((d.kind ^ other.kind) >> 8 & 0xff) == 0;
  if (d.tiling != other.tiling && same_variant) {
    next();
    text.put("tiles ");
    text.put(static_cast<uint64_t>(d.tiling >> 16));
    text.put(" x ");
    text.put(static_cast<uint64_t>(d.tiling & 0xffff));
  }
  if ((d.grid >> 8) != (other.grid >> 8) && same_variant) {
    next();
    text.put(static_cast<uint64_t>(d.grid >> 8));
    text.put(" blocks");
  }
  // Different tensors matter only when nothing else explains the difference.
  if (d.layout != other.layout && same_but_layout(d, other)) {
    next();
    text.put("other tensors: pass the same heap tensors on every rank");
  }
  text.put(")");
}

// A report of the call protocol (detail::report_and_trap): `write` words the message. The calls' numbers
// go in the mailbox's number fields as well (last_value: this rank's call, expected: the other rank's, 0
// when unknown; address: the other rank), so that the host names the script line of its call
// (iris_collective_report). `waited_ns`: how long a wait that gave up waited (0 for a disagreement),
// which tells the host that a rank did not come (it then has every rank say where it is:
// comm::hang::report_now).
template <class Write>
[[noreturn]] IRIS_DEVICE void report(uint64_t my_call, uint64_t their_call, int peer, Write write,
                                     unsigned long long waited_ns = 0) {
  ::iris::detail::report_and_trap("ctx.ccl/ctx.ops: the ranks disagree about a collective call",
                                  [&](abi::DeviceMailbox& box) {
                                    box.waited_seconds = static_cast<double>(waited_ns) * 1e-9;
                                    box.last_value = static_cast<int64_t>(my_call);
                                    box.expected = static_cast<int64_t>(their_call);
                                    box.address = static_cast<uint64_t>(peer);
                                    Text{box.what, 0, static_cast<int>(sizeof box.what)}.put("ctx.ccl or ctx.ops");
                                    Text text{box.message, 0, static_cast<int>(sizeof box.message)};
                                    write(text);
                                  });
}

IRIS_DEVICE bool same_call(const CallDescriptor& a, const CallDescriptor& b) {
  return same_but_layout(a, b) && a.layout == b.layout;
}

IRIS_DEVICE uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// What same_call compares, in 64 bits: a one-way call sends it with its data, and the full
// descriptor is read only when the hashes differ.
IRIS_DEVICE uint64_t call_hash(const CallDescriptor& d) {
  uint64_t h = mix(mix(mix(d.count, d.rows), mix(d.cols, d.group)), d.layout);
  h = mix(h, static_cast<uint64_t>(d.kind) << 32 | static_cast<uint32_t>(d.root));
  return mix(h, static_cast<uint64_t>(d.tiling) << 32 | d.grid);
}

// Out of line, like the other reports: they are rare, and long.
[[noreturn]] __device__ __noinline__ void report_mismatch(int me, const CallDescriptor& mine, int peer,
                                              const CallDescriptor& theirs) {
  report(mine.seq, theirs.seq, peer, [&](Text& text) {
    const int mine_collective = mine.kind & 0xff, their_collective = theirs.kind & 0xff;
    const bool same_collective = mine_collective == their_collective;
    // The lower rank first, whichever of the two found out.
    const bool me_first = me < peer;
    const CallDescriptor& a = me_first ? mine : theirs;
    const CallDescriptor& b = me_first ? theirs : mine;
    const bool ops_a = is_op(a.kind & 0xff), ops_b = is_op(b.kind & 0xff);
    text.put(ops_a == ops_b ? (ops_a ? "ctx.ops" : "ctx.ccl") : "ctx.ccl and ctx.ops");
    if (same_collective) {
      text.put(".");
      text.put(collective_name(mine_collective));
    }
    // "rank 0 called it with ..." or, when the collectives differ, "rank 0 called all_reduce with ...".
    auto side = [&](const char* lead, int rank, const CallDescriptor& d, const CallDescriptor& other, const char* same) {
      text.put(lead);
      text.put(rank);
      if (same_collective) {
        text.put(same);
      } else {
        text.put(" called ");
        text.put(collective_name(d.kind & 0xff));
        text.put(" with ");
      }
      describe(text, d, other);
    };
    side(": rank ", me_first ? me : peer, a, b, " called it with ");
    side(", rank ", me_first ? peer : me, b, a, " with ");
  });
}

// ---- the call ------------------------------------------------------------------------------------

// This rank's heap base without a load: the heap bases table lies at offset 0 of every heap
// (src/heap/layout.hpp), and a kernel's Context points at this rank's own table (kernel.lua fills it
// from ctx:heap_bases(); tests/lua/ccl_one_way.lua checks the two agree). A call's set-up computes its
// state's and staging's addresses from it, instead of loading heap_bases[rank] before anything else.
IRIS_DEVICE uintptr_t own_heap_base(const Context& ctx) { return reinterpret_cast<uintptr_t>(ctx.heap_bases); }
IRIS_DEVICE CallState* call_state(const Context& ctx) {
  return reinterpret_cast<CallState*>(own_heap_base(ctx) + IRIS_CCL_STATE_OFFSET);
}

struct Call {
  Team team;
  CallState* state;  // this rank's
  uint64_t seq;
  CallDescriptor mine;
  const char* name;  // "ctx.ccl.all_reduce", for timeouts

  IRIS_DEVICE bool last_block() const { return blockIdx.x == gridDim.x - 1; }
  IRIS_DEVICE CallState* state_of(int rank) const { return on(team, state, rank); }
  // The pair epoch of this call with `rank` (a member).
  IRIS_DEVICE uint64_t epoch_with(int rank) const { return state->pair_epoch[(seq - 1) & 1][rank] + 1; }
  // The call number of member `rank` for this call (from its descriptor, once it arrived).
  IRIS_DEVICE uint64_t seq_of(int rank) const {
    return rank == team.rank() ? seq : state->descriptors[rank][epoch_with(rank) & 1].seq;
  }

  // Arrival: block 0 tells every member "my inputs are ready, my outputs free" with its descriptor;
  // every block then waits for every member's arrival and checks its descriptor. The last block
  // carries this rank's bookkeeping forward to parity seq % 2, which no block of this call reads.
  IRIS_DEVICE void begin() const {
    const int me = team.rank(), t = thread_index(), n = thread_count();
    if (blockIdx.x == 0) {
      ::iris::fence(acq_rel, sys);  // the rank's earlier work comes before the arrival
      announce();
    }
    if (last_block()) account(gridDim.x);
    for (int i = t; i < team.size; i += n) {
      const int q = team.rank_of(i);
      if (q != me) wait_arrival(q);
    }
    __syncthreads();
  }

  // A one-way call (ccl_ll.hpp) waits for no arrival and is owed no deliveries: only the bookkeeping.
  // It announces itself later, once its first data are on their way (OneWay::exchange_headers).
  IRIS_DEVICE void begin_one_way() const {
    if (last_block()) account(0);
  }

  // The descriptor, then the arrival (release), into every member's state: the block's threads take
  // the members in turn. What a pull variant's peers wait for before they touch this rank's memory;
  // for a one-way call (ccl_ll.hpp) the credit that it is done with the staging of two calls ago, and
  // the description a mismatch report reads.
  IRIS_DEVICE void announce() const { announce(thread_index(), thread_count()); }
  // The same by the threads first, first + step, ... of the block (a one-way call's control warp).
  IRIS_DEVICE void announce(int first, int step) const {
    const int me = team.rank();
    for (int i = first; i < team.size; i += step) {
      const int q = team.rank_of(i);
      if (q == me) continue;
      CallDescriptor d = mine;
      d.epoch = epoch_with(q);
      *on(team, &state->descriptors[me][d.epoch & 1], q) = d;
      ::iris::signal_set(&state->arrived[me], d.epoch, me, q, team.ctx.heap_bases);
    }
  }

  // The last block's bookkeeping for the next call: pair epochs, and the deliveries (`blocks` from
  // each peer; none for a one-way call) its completion will wait for. By the threads first, first +
  // step, ... (the block's, or a one-way call's control warp).
  IRIS_DEVICE void account(uint64_t blocks) const { account(blocks, thread_index(), thread_count()); }
  IRIS_DEVICE void account(uint64_t blocks, int first, int step) const {
    const int me = team.rank();
    for (int q = first; q < team.ctx.world_size; q += step) {
      const bool member = (team.members >> q) & 1u;
      state->pair_epoch[seq & 1][q] = state->pair_epoch[(seq - 1) & 1][q] + (member ? 1 : 0);
      state->expected[seq & 1][q] = state->expected[(seq - 1) & 1][q] + (member && q != me ? blocks : 0);
    }
  }

  // Completion: every block says it is done with every member's memory; the last block waits until
  // every member's blocks said so (unless `wait` is false: an async call whose output does not
  // depend on it).
  IRIS_DEVICE void end(bool wait) const {
    const int me = team.rank(), t = thread_index(), n = thread_count();
    __syncthreads();
    for (int i = t; i < team.size; i += n) {
      const int q = team.rank_of(i);
      if (q != me) ::iris::signal_add(&state->delivered[me], uint64_t{1}, me, q, team.ctx.heap_bases);
    }
    if (wait && last_block()) {
      for (int i = t; i < team.size; i += n) {
        const int q = team.rank_of(i);
        if (q != me) wait_delivered(q);
      }
    }
    finish();
  }

  // The call counter lives on the device, so that a launch replayed from a graph is a new call: every
  // block read `calls` when it started (make_call); the last block to end, whichever it is, counts
  // this call, after every block of it has read the old count.
  IRIS_DEVICE void finish() const {
    __syncthreads();
    if (thread_index() == 0) count();
  }

  // The counting itself, by one thread of each block once every thread of its block has read `calls`
  // (a barrier after the reads): a block says it is done with the count, and the last of the call's
  // blocks to say so stores the new one. A one-way call counts right after its set-up's barrier
  // (ccl_ll.hpp, OneWay::start), off the data's way: the next call's kernel starts after this one ends.
  IRIS_DEVICE void count() const {
    if (gridDim.x == 1) {  // the one block has read the count: no other to wait for
      ::iris::detail::atomic_store(&state->calls, seq, relaxed, gpu);
      return;
    }
    const unsigned int ended = ::iris::detail::fetch_add(&state->finished, 1u, acq_rel, gpu);
    if (ended == gridDim.x - 1) {
      state->finished = 0;
      ::iris::detail::atomic_store(&state->calls, seq, relaxed, gpu);
    }
  }

  // The completion wait names the member that did not finish (a rank stopped mid-call said only
  // "address ... held 724, waited for >= 728").
  IRIS_DEVICE void wait_delivered(int q) const {
    const uint64_t expected = state->expected[seq & 1][q];
    uint64_t seen = 0;
    ::iris::detail::bounded_spin(
        [&] {
          seen = ::iris::detail::atomic_load(&state->delivered[q], acquire, sys);
          return seen >= expected;
        },
        [&](unsigned long long waited) { report_unfinished(q, seen, expected, waited); });
  }

  [[noreturn]] __device__ __noinline__ void report_unfinished(int q, uint64_t seen, uint64_t expected,
                                                  unsigned long long waited_ns) const {
    const int me = team.rank();
    report(
        seq, 0, q,
        [&](Text& text) {
          text.put(name);
          text.put(" on rank ");
          text.put(me);
          text.put(": rank ");
          text.put(q);
          text.put(" called it but did not finish within ");
          text.put(static_cast<uint64_t>(waited_ns / 1000000000ull));
          text.put(" s (its blocks were done with this rank's memory ");
          text.put(seen);
          text.put(" times of the ");
          text.put(expected);
          text.put(" this rank waits for)");
        },
        waited_ns);
  }

  IRIS_DEVICE void wait_arrival(int q) const {
    const uint64_t epoch = epoch_with(q);
    const uint64_t* slot = &state->arrived[q];
    uint64_t seen = 0;
    ::iris::detail::bounded_spin(
        [&] {
          seen = ::iris::detail::atomic_load(slot, acquire, sys);
          return seen >= epoch;
        },
        [&](unsigned long long waited) { report_absent(q, seen, epoch, waited); });
    const CallDescriptor& theirs = state->descriptors[q][epoch & 1];
    // A descriptor of another epoch: q arrived with a one-way call, whose description is in its header.
    if (theirs.epoch != epoch) report_mismatch(team.rank(), mine, q, one_way_descriptor(q, epoch));
    if (!same_call(mine, theirs)) report_mismatch(team.rank(), mine, q, theirs);
  }

  // This rank's one-way staging (impl/ccl_lines.hpp), where the host put it.
  IRIS_DEVICE Staging staging() const {
    return Staging{reinterpret_cast<unsigned char*>(own_heap_base(team.ctx) + state->staging), state->slot_bytes};
  }

  // The descriptor q sent in the header of its one-way call at `epoch` (impl/ccl_ll.hpp): the words of
  // lines 1 to kDescriptorLines of its slot in this rank's staging, once they carry the epoch.
  __device__ __noinline__ CallDescriptor one_way_descriptor(int q, uint64_t epoch) const {
    struct Words {
      uint64_t w[kDescriptorLines];
    } words;
    const Line* header = staging().slot(q, epoch, 0);
    for (int i = 0; i < kDescriptorLines; ++i) {
      const Line* line = header + 1 + i;
      const uint32_t flag = static_cast<uint32_t>(epoch);
      ::iris::detail::bounded_spin([&] { return line_load(line, flag, words.w[i]); },
                                   [&](unsigned long long waited) { report_absent(q, epoch, epoch, waited); });
    }
    return ::iris::detail::bit_cast<CallDescriptor>(words);
  }

  [[noreturn]] __device__ __noinline__ void report_absent(int q, uint64_t made, uint64_t epoch,
                                              unsigned long long waited_ns) const {
    const int me = team.rank();
    report(seq, 0, q, [&](Text& text) {
      text.put(name);
      text.put(" on rank ");
      text.put(me);
      text.put(": rank ");
      text.put(q);
      text.put(" did not call it within ");
      text.put(static_cast<uint64_t>(waited_ns / 1000000000ull));
      text.put(" s (");
      put_group(text, team.members);
      text.put("; rank ");
      text.put(q);
      text.put(" made ");
      text.put(made);
      text.put(made == 1 ? " collective call" : " collective calls");
      text.put(" with rank ");
      text.put(me);
      text.put(", this is rank ");
      text.put(me);
      text.put("'s call number ");
      text.put(epoch);
      text.put(" with it)");
    }, waited_ns);
  }
};

// A tensor the peers reach in this rank's heap: it must be the same tensor (offset and row stride)
// on every rank. Tensors only this rank touches may differ (an all_gather's input may be the rank's
// own chunk of the output).
struct Shared {
  const void* ptr;
  int64_t stride;
};

// Sets up call number `seq`: the members, this rank's descriptor (the layout hash from the shared
// tensors' heap offsets and strides).
IRIS_DEVICE Call make_call(const Context& ctx, uint64_t seq, const char* name, int collective, uint64_t group, int variant,
                           int dtype, int op, int root, uint64_t count, uint64_t rows, int dim, int block_m, int block_n,
                           Shared a, Shared b) {
  Call c;
  c.team = team(ctx, group);
  const uintptr_t base = own_heap_base(ctx);
  c.state = call_state(ctx);
  c.seq = seq;
  c.name = name;
  CallDescriptor& d = c.mine;
  d.seq = seq;
  d.epoch = 0;
  d.count = count;
  d.rows = rows;
  d.cols = 0;
  d.group = group;
  uint64_t h = 0;
  const Shared shared[2] = {a, b};
  for (const Shared& t : shared) {
    if (t.ptr == nullptr) continue;
    h = mix(h, reinterpret_cast<uintptr_t>(t.ptr) - base);
    if (rows > 1) h = mix(h, static_cast<uint64_t>(t.stride));  // a single row has no stride to speak of
  }
  d.layout = h;
  d.kind = static_cast<uint32_t>(collective) | static_cast<uint32_t>(variant) << 8 |
           static_cast<uint32_t>(dtype) << 16 | static_cast<uint32_t>(op) << 24;
  d.root = root;
  d.tiling = static_cast<uint32_t>(block_m) << 16 | static_cast<uint32_t>(block_n);
  d.grid = static_cast<uint32_t>(gridDim.x) << 8 | static_cast<uint32_t>(dim);
  return c;
}

// The same for the call this kernel makes: the one after the rank's last counted call. A plain read of
// the counter: an earlier kernel wrote it (Call::count), and the loads after it need not wait. The
// first thing a host collective's kernel does, so the wait of an IRIS_EARLY_START kernel is here (it
// does nothing in a kernel launched the ordinary way).
IRIS_DEVICE Call make_call(const Context& ctx, const char* name, int collective, uint64_t group, int variant, int dtype,
                           int op, int root, uint64_t count, uint64_t rows, int dim, int block_m, int block_n, Shared a,
                           Shared b) {
  ::iris::detail::wait_for_earlier_kernels();
  ::iris::detail::allow_later_kernels();
  return make_call(ctx, call_state(ctx)->calls + 1, name, collective, group, variant, dtype, op, root, count, rows, dim,
                   block_m, block_n, a, b);
}

// The Sync of the host collectives: kReady is the arrival (every block waited for it in begin()) and
// kDone the deliveries (end()), so both cost nothing per tile; the middle steps are this block's
// progress, `ordinal` counting the tiles the block handled in this call (the same tiles in the same
// order on every rank).
// A fused op (ctx.ops) writes the tile it reduces in the same kernel: its kReady is published per tile
// (`ready_per_tile`), and only kDone is left to the deliveries.
struct CallSync {
  const Call* call;
  uint64_t ordinal;
  bool ready_per_tile = false;

  IRIS_DEVICE uint64_t value(uint64_t seq, int step) const { return seq << 32 | (ordinal * 4 + static_cast<uint64_t>(step)); }
  IRIS_DEVICE bool active(int step) const { return step != kDone && (step != kReady || ready_per_tile); }
  IRIS_DEVICE void publish(int step) const {
    ::iris::detail::atomic_store(&call->state->progress[blockIdx.x], value(call->seq, step), release, sys);
  }
  IRIS_DEVICE void wait(int rank, int step) const {
    const uint64_t* slot = &call->state_of(rank)->progress[blockIdx.x];
    ::iris::detail::wait_for(slot, Cmp::ge, value(call->seq_of(rank), step), acquire, sys, call->name);
  }
};

// Runs `statement` with T the element type of dtype code `dtype` (IRIS_DTYPE_CODES). A macro, not a
// generic lambda: NVRTC compiles no lambdas in device code.
static_assert(IRIS_DTYPE_COUNT == 12, "a new dtype needs its case in IRIS_CCL_FOR_DTYPE");
#define IRIS_CCL_FOR_DTYPE(dtype, T, statement)                               \
  switch (dtype) {                                                             \
    case IRIS_DTYPE_bool: { typedef bool T; statement; } break;                \
    case IRIS_DTYPE_int8: { typedef int8_t T; statement; } break;              \
    case IRIS_DTYPE_uint8: { typedef uint8_t T; statement; } break;            \
    case IRIS_DTYPE_int16: { typedef int16_t T; statement; } break;            \
    case IRIS_DTYPE_int32: { typedef int32_t T; statement; } break;            \
    case IRIS_DTYPE_uint32: { typedef uint32_t T; statement; } break;          \
    case IRIS_DTYPE_int64: { typedef int64_t T; statement; } break;            \
    case IRIS_DTYPE_uint64: { typedef uint64_t T; statement; } break;          \
    case IRIS_DTYPE_float16: { typedef ::iris::half T; statement; } break;     \
    case IRIS_DTYPE_bfloat16: { typedef ::iris::bfloat16 T; statement; } break; \
    case IRIS_DTYPE_float32: { typedef float T; statement; } break;            \
    default: { typedef double T; statement; } break;                           \
  }

// The same for collectives that only copy: T is the unsigned integer of the dtype's size.
#define IRIS_CCL_FOR_SIZE(dtype, T, statement)                          \
  switch (::iris::ccl::detail::dtype_size(dtype)) {                     \
    case 1: { typedef uint8_t T; statement; } break;                    \
    case 2: { typedef uint16_t T; statement; } break;                   \
    case 4: { typedef uint32_t T; statement; } break;                   \
    default: { typedef uint64_t T; statement; } break;                  \
  }

IRIS_DEVICE int dtype_size(int d) {
#define IRIS_CCL_SIZE_CASE(name, code, bytes, kind) \
  case code: return bytes;
  switch (d) { IRIS_DTYPE_CODES(IRIS_CCL_SIZE_CASE) default: return 8; }
#undef IRIS_CCL_SIZE_CASE
}

// Variant codes, as Lua passes them: variant::one_shot, ... (IRIS_VARIANT_CODES).
namespace variant {
#define IRIS_CCL_VARIANT_ENUMERATOR(name, code) name = code,
enum : int { IRIS_VARIANT_CODES(IRIS_CCL_VARIANT_ENUMERATOR) };
#undef IRIS_CCL_VARIANT_ENUMERATOR
}  // namespace variant

// The lock of a tile: tiles share the rank's locks by index.
IRIS_DEVICE uint32_t* lock_of(const Call& call, int64_t tile_index) {
  return &call.state->locks[tile_index % kLocks];
}

// One tile of a collective as a device trace event (a trace with device events on: iris-lua --trace
// with IRIS_TRACE_DEVICE; otherwise trace_begin and trace_end are empty and this vanishes): `id` is
// iris::event::reduce for the reducing collectives, copy for the moving ones; bytes are the tile's.
struct TileEvent {
  TraceHandle handle;
  IRIS_DEVICE TileEvent(uint32_t id, const Tile& t, size_t element_size)
      : handle(trace_begin(id, -1, static_cast<uint64_t>(t.rows) * static_cast<uint64_t>(t.cols) * element_size)) {}
  IRIS_DEVICE ~TileEvent() { trace_end(handle); }
  TileEvent(const TileEvent&) = delete;
  TileEvent& operator=(const TileEvent&) = delete;
};

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_CALL_HPP
