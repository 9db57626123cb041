// Block copies staged through shared memory (iris.hpp documents them). On NVIDIA sm_90 and newer the
// SM's bulk-copy unit (cp.async.bulk, what TMA executes) moves the bytes: one warp of the block issues
// copies of whole kilobytes global -> shared -> global, and the unit keeps them in flight without the
// threads' registers, so a few blocks can drive a link that needs thousands of blocks' 16-byte loads and
// stores (put_block). Elsewhere, and for rows the unit cannot copy (addresses or lengths off 16 bytes),
// the block's threads copy with put_block's 16-byte loop.
//
// The staging buffer: [0, kHeaderBytes) holds one mbarrier per slot (the unit signals there how many
// bytes of a load have landed); the rest is cut into `slots` slots of `slot_bytes`, each holding one
// chunk of the walk at a time. A chunk is either several whole rows (short rows, packed) or a
// slot-sized piece of one row (long rows, and the one "row" of a 1-D copy).
#ifndef IRIS_IMPL_STAGED_COPY_HPP
#define IRIS_IMPL_STAGED_COPY_HPP

#if defined(IRIS_PLATFORM_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define IRIS_HAS_BULK_COPY 1
#endif

namespace iris {
namespace detail {
namespace staged {

// When a staged copy returns: its writes done (`written`), or only the staging buffer free again
// (`read`: the writes are still in flight, and await_writes() waits for them before anything tells
// another block or rank they are there). `read` lets a block go on computing, or start its next copy,
// while the link drains the last one.
enum class Completion { written, read };

// The slots' size aimed at, tunable per compile (iris.compile(src, {defines = {IRIS_STAGED_SLOT_BYTES =
// 16384}})); docs/perf.md has the measurements.
#ifndef IRIS_STAGED_SLOT_BYTES
#define IRIS_STAGED_SLOT_BYTES 8192
#endif

constexpr unsigned int kHeaderBytes = 128;  // the mbarriers; slots start 128-byte aligned after them
constexpr unsigned int kMaxSlots = 8;
constexpr unsigned int kSlotTarget = IRIS_STAGED_SLOT_BYTES;  // slots at least this large, when the buffer allows

// How the buffer is cut: as many slots of kSlotTarget bytes as fit (2 to kMaxSlots: two is the least
// that overlaps one chunk's load with another's stores), each a multiple of 128 bytes.
struct Plan {
  unsigned int slots = 0, slot_bytes = 0;
  IRIS_DEVICE bool usable() const { return slots >= 2 && slot_bytes >= 128; }
};
IRIS_DEVICE Plan plan(const Staging& staging) {
  Plan p;
  if (staging.buffer == nullptr || reinterpret_cast<uintptr_t>(staging.buffer) % 16 != 0 ||
      staging.bytes < kHeaderBytes + 2 * 128) {
    return p;
  }
  const unsigned int room = staging.bytes - kHeaderBytes;
  unsigned int slots = room / kSlotTarget;
  slots = slots < 2 ? 2 : (slots > kMaxSlots ? kMaxSlots : slots);
  p.slots = slots;
  p.slot_bytes = room / slots / 128 * 128;
  return p;
}

// Rows whose every segment the bulk unit can copy: 16-byte aligned addresses, strides and lengths.
IRIS_DEVICE bool bulk_copyable(const void* src, int64_t src_stride, int64_t dst_stride, int64_t row_bytes) {
  return reinterpret_cast<uintptr_t>(src) % 16 == 0 && src_stride % 16 == 0 && dst_stride % 16 == 0 &&
         row_bytes % 16 == 0 && row_bytes > 0;
}

#if defined(IRIS_HAS_BULK_COPY)

// Orders this thread's generic-proxy accesses (plain loads and stores, to global and shared memory)
// against the bulk unit's (the async proxy), both ways. Without it the unit may read a tile before the
// stores that wrote it, or the block may signal before the unit's writes.
// IRIS_STAGED_FENCE 1 (an experiment's knob, docs/experiments/staged_tiles.lua): the two state spaces'
// fences instead of the fence over all of them.
#if defined(IRIS_STAGED_FENCE) && IRIS_STAGED_FENCE == 1
IRIS_DEVICE void proxy_fence() {
  asm volatile("fence.proxy.async.global;\nfence.proxy.async.shared::cta;\n" ::: "memory");
}
#else
IRIS_DEVICE void proxy_fence() { asm volatile("fence.proxy.async;\n" ::: "memory"); }
#endif

IRIS_DEVICE void init_barrier(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(bar)) : "memory");
}
IRIS_DEVICE void invalidate_barrier(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// The one arrival of a slot's phase, announcing `bytes` still to land.
IRIS_DEVICE void expect_bytes(uint64_t* bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
IRIS_DEVICE void wait_phase(uint64_t* bar, unsigned int parity) {
  unsigned int done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  }
}
IRIS_DEVICE void load_async(void* slot, const void* from, unsigned int bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   shared_address(slot)),
               "l"(from), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}
IRIS_DEVICE void store_async(void* to, const void* slot, unsigned int bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(to), "r"(shared_address(slot)),
               "r"(bytes)
               : "memory");
}
IRIS_DEVICE void commit_stores() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's store groups, all but the newest `Pending`, have read their slots.
template <int Pending>
IRIS_DEVICE void wait_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}
// This thread's store groups are complete (written).
IRIS_DEVICE void wait_stores_written() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// The walk's chunk `index`: rows [row, row + rows) from byte `offset` of each, `bytes` of each.
struct Chunk {
  int64_t row, rows, offset;
  unsigned int bytes;
};
struct Walk {
  int64_t rows, row_bytes, chunks, rows_per_chunk, pieces_per_row;
  unsigned int slot_bytes;
  IRIS_DEVICE Walk(int64_t rows_, int64_t row_bytes_, unsigned int slot_bytes_)
      : rows(rows_), row_bytes(row_bytes_), slot_bytes(slot_bytes_) {
    if (row_bytes <= slot_bytes) {
      rows_per_chunk = slot_bytes / row_bytes;
      pieces_per_row = 1;
      chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    } else {
      rows_per_chunk = 1;
      pieces_per_row = (row_bytes + slot_bytes - 1) / slot_bytes;
      chunks = rows * pieces_per_row;
    }
  }
  IRIS_DEVICE Chunk at(int64_t index) const {
    Chunk c;
    if (pieces_per_row == 1) {
      c.row = index * rows_per_chunk;
      c.rows = rows - c.row < rows_per_chunk ? rows - c.row : rows_per_chunk;
      c.offset = 0;
      c.bytes = static_cast<unsigned int>(row_bytes);
    } else {
      c.row = index / pieces_per_row;
      c.rows = 1;
      c.offset = (index % pieces_per_row) * slot_bytes;
      c.bytes = static_cast<unsigned int>(row_bytes - c.offset < slot_bytes ? row_bytes - c.offset : slot_bytes);
    }
    return c;
  }
};

// Warp 0 of the block runs the pipeline; its lanes share each chunk's rows. Slot j % slots holds chunk j;
// up to `slots` - 1 chunks are loading while the newest one is stored to every destination. A slot is
// refilled once the stores issued from it have read it (the unit's writes to far memory then complete
// on their own, until the final wait).
template <class Dest>
IRIS_DEVICE void run_pipeline(const uint8_t* src, int64_t src_stride, const Dest& dest, int dests, int64_t dst_stride,
                              const Walk& walk, const Plan& plan, uint8_t* buffer, Completion completion) {
  uint64_t* bars = reinterpret_cast<uint64_t*>(buffer);
  uint8_t* slots = buffer + kHeaderBytes;
  const int lane = static_cast<int>(block_thread_index() % 32);
  const int64_t in_flight = walk.chunks < plan.slots ? walk.chunks : plan.slots;
  auto load = [&](int64_t index) {
    const Chunk c = walk.at(index);
    uint8_t* slot = slots + (index % plan.slots) * plan.slot_bytes;
    uint64_t* bar = &bars[index % plan.slots];
    if (lane == 0) expect_bytes(bar, static_cast<unsigned int>(c.rows) * c.bytes);
    __syncwarp();  // the phase's byte count is set before any of its bytes can land
    for (int64_t r = lane; r < c.rows; r += 32) {
      load_async(slot + r * c.bytes, src + (c.row + r) * src_stride + c.offset, c.bytes, bar);
    }
  };
  for (int64_t j = 0; j < in_flight; ++j) load(j);
  for (int64_t j = 0; j < walk.chunks; ++j) {
    const Chunk c = walk.at(j);
    const uint8_t* slot = slots + (j % plan.slots) * plan.slot_bytes;
    wait_phase(&bars[j % plan.slots], static_cast<unsigned int>((j / plan.slots) & 1));
    for (int d = 0; d < dests; ++d) {
      uint8_t* to = dest(d);
      for (int64_t r = lane; r < c.rows; r += 32) store_async(to + (c.row + r) * dst_stride + c.offset, slot + r * c.bytes, c.bytes);
    }
    commit_stores();  // every lane, every chunk (an empty group where it had no rows): the counts agree
    const int64_t refill = j - 1 + plan.slots;  // goes into chunk j - 1's slot
    if (j >= 1 && refill < walk.chunks) {
      wait_stores_read<1>();
      __syncwarp();  // every lane's stores from the slot have read it
      load(refill);
    }
  }
  if (completion == Completion::written) {
    wait_stores_written();
  } else {
    wait_stores_read<0>();
  }
  proxy_fence();  // the unit's accesses before this thread's next plain ones (and the block's signal)
}

#endif  // IRIS_HAS_BULK_COPY

// `rows` rows of `row_bytes` bytes at `src` (rows `src_stride` bytes apart) to each of `dests`
// destinations, dest(d) the first row of destination d (rows `dst_stride` bytes apart), through the
// staging buffer with the bulk unit. Every thread of the block calls it; it synchronizes the block on
// entry and on exit, and the copy is written when any thread returns. Returns false, having done nothing
// and synchronized nothing, where the unit cannot do it (no unit, a buffer too small, rows off 16 bytes):
// the caller then copies with the threads.
template <class Dest>
IRIS_DEVICE bool copy_rows_bulk(const uint8_t* src, int64_t src_stride, const Dest& dest, int dests,
                                int64_t dst_stride, int64_t rows, int64_t row_bytes, const Staging& staging,
                                Completion completion = Completion::written) {
#if defined(IRIS_HAS_BULK_COPY)
  const Plan p = plan(staging);
  if (!p.usable() || !bulk_copyable(src, src_stride, dst_stride, row_bytes)) return false;
  for (int d = 0; d < dests; ++d) {
    if (reinterpret_cast<uintptr_t>(dest(d)) % 16 != 0) return false;
  }
  uint8_t* buffer = static_cast<uint8_t*>(staging.buffer);
  uint64_t* bars = reinterpret_cast<uint64_t*>(buffer);
  proxy_fence();  // what this thread wrote (the data, the buffer's earlier contents) before the unit's accesses
  __syncthreads();
  const unsigned int t = block_thread_index();
  if (t < p.slots) init_barrier(&bars[t]);
  if (t == 0) asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  __syncthreads();
  if (t < 32 && rows > 0 && dests > 0) {
    run_pipeline(src, src_stride, dest, dests, dst_stride, Walk(rows, row_bytes, p.slot_bytes), p, buffer, completion);
  }
  __syncthreads();
  if (t < p.slots) invalidate_barrier(&bars[t]);  // the buffer is plain shared memory again
  __syncthreads();
  return true;
#else
  (void)src, (void)src_stride, (void)dest, (void)dests, (void)dst_stride, (void)rows, (void)row_bytes, (void)staging,
      (void)completion;
  return false;
#endif
}

// Every thread of a block that made staged copies with Completion::read calls this before the block
// says they are done (a __syncthreads() and a release, as mark_done and the call's end() do): it returns
// once the writes this thread had the unit make are written. A thread that made none returns at once.
IRIS_DEVICE void await_writes() {
#if defined(IRIS_HAS_BULK_COPY)
  wait_stores_written();
  proxy_fence();
#endif
}

// A 1-D block copy through the staging buffer: the 16-byte aligned middle by the bulk unit, the
// unaligned head and tail by the threads; put_block's loop where the unit cannot. Synchronizes the block
// on entry and exit on every platform (iris.hpp's contract for the staged forms).
template <class T>
IRIS_DEVICE void block_copy_staged(const T* src, T* dst, size_t count, bool to_another_rank, const Staging& staging) {
  __syncthreads();  // the caller's earlier use of the buffer, or of the data, is over
  bool moved = false;
  const Split16 split = split16(src, dst, count);
  if (split.vector) {
    const size_t head = split.head, body = split.chunks * 16;
    if (body > 0) {
      const uint8_t* from = reinterpret_cast<const uint8_t*>(src + head);
      uint8_t* to = reinterpret_cast<uint8_t*>(dst + head);
      moved = copy_rows_bulk(from, 0, [to](int) { return to; }, 1, 0, 1, static_cast<int64_t>(body), staging);
    }
    if (moved) {  // the head and the tail, element by element
      const size_t t = block_thread_index(), stride = block_thread_count();
      const size_t tail = head + body / sizeof(T);
      for (size_t i = t; i < head; i += stride) dst[i] = src[i];
      for (size_t i = tail + t; i < count; i += stride) dst[i] = src[i];
    }
  }
  if (!moved) block_copy(src, dst, count, to_another_rank);
  __syncthreads();
}

}  // namespace staged
}  // namespace detail

// A side on another node goes through the host proxy instead (block_copy_any); the staging is for peer
// links. The block meets at the end either way, as the staged copy does.
template <class T>
IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb,
                           const Staging& staging) {
  T* to = translate(dst, from_rank, to_rank, hb);
  detail::block_copy_any(src, to, count, [&] {
    detail::staged::block_copy_staged(src, to, count, from_rank != to_rank, staging);
  });
  if (detail::is_remote(to)) __syncthreads();
}

template <class T>
IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb,
                           const Staging& staging) {
  const T* from = translate(src, from_rank, to_rank, hb);
  detail::block_copy_any(from, dst, count, [&] { detail::staged::block_copy_staged(from, dst, count, false, staging); });
  if (detail::is_remote(from)) __syncthreads();
}

template <class T>
IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, int cur_rank,
                            const uint64_t* hb, const Staging& staging) {
  const T* from = translate(src, cur_rank, from_rank, hb);
  T* to = translate(dst, cur_rank, to_rank, hb);
  detail::block_copy_any(from, to, count, [&] {
    detail::staged::block_copy_staged(from, to, count, to_rank != cur_rank, staging);
  });
  if (detail::is_remote(from) || detail::is_remote(to)) __syncthreads();
}

}  // namespace iris

#endif  // IRIS_IMPL_STAGED_COPY_HPP
