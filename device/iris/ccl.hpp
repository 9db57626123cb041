// Collectives in kernels: tensor views, tiles, and Iris's tile-level collectives (iris.x) for kernels
// that fuse communication into their own work. The host collectives (ctx.ccl, kernels/ccl/*.hip) are
// built from the same pieces. Declarations and contracts here; bodies in impl/ccl_*.hpp.
//
// ---- Views and tiles ------------------------------------------------------------------------------
// A View is a 2-D window on a tensor: `rows` x `cols` elements, row i starting `stride` elements after
// row i - 1, columns contiguous. A 1-D tensor is the view 1 x n. `chunk_step` is the distance in
// elements between consecutive members' chunks of a chunked tensor (all_gather's output, the input of
// reduce_scatter, both tensors of all_to_all): chunk(i) is the view moved by i * chunk_step.
// A Tile is the block_m x block_n rectangle number `index` of a view (row-major over the view's tiles),
// cut at the view's edges, so any size works. Pointers in views are in the current rank's address
// space; the collectives reach the peers' copies by translation (same heap offset on every rank).
//
// ---- Who takes part -------------------------------------------------------------------------------
// A Team is a set of at most 64 ranks (a bit mask), ordered by rank; `index` is the current rank's
// position in it. Every member calls a tile-level collective for the same tile with the same views.
//
// ---- Synchronization: Sync objects ----------------------------------------------------------------
// A tile-level collective tells the members about its progress on one tile in steps, through a Sync:
//   sync.publish(step)      one thread, after __syncthreads(): "this rank has done `step` of this
//                           tile" (release, system scope: it covers everything the block did before)
//   sync.wait(rank, step)   one thread: until `rank` published `step` of this tile (acquire, bounded)
//   sync.active(step)       whether the step is published and waited for at all (the host collectives
//                           order kReady and kDone by other means: their steps cost nothing)
// Steps: kReady (the caller's input tile is written, and its output tile may be written by peers),
// kStaged (a middle step: read done, partial or own part in place), kFinal (ring: final value in
// place), kDone (everything this rank does to the peers' memory for this tile is finished).
// TileFlags is the Sync for user kernels: one uint64 flag per tile in a symmetric array that is zero
// at first, and an epoch that grows by at least 1 per use of the same flags (flag = epoch * 8 + step),
// so flags are never re-zeroed. Flags live in the producer's heap; waiters read them remotely.
//
// Every tile-level collective is block-cooperative: all threads of the block call it with the same
// arguments. A block holds a tile in registers: it needs at least (tile elements) / 32 threads (a
// device fault says so otherwise). Like a spinning wait, a call that waits for peers needs those
// peers' blocks running: launch no more blocks than can run at once (the cpu backend runs
// IRIS_CPU_THREADS blocks at once), or give each rank's blocks the same tiles in the same order.
//
// Reductions: Op::sum, prod, min, max for every type; band, bor, bxor for integers and bool. float16
// and bfloat16 accumulate in float32; integer sums and products wrap; min/max of floats propagate NaN;
// bool reduces as logic (sum, max, bor: or; prod, min, band: and; bxor: xor).
#ifndef IRIS_CCL_HPP
#define IRIS_CCL_HPP

namespace iris {
namespace ccl {

enum class Op : int { sum = 0, prod = 1, min = 2, max = 3, band = 4, bor = 5, bxor = 6 };

namespace detail {
template <class T> struct same { typedef T type; };
template <class T> struct is_const { static constexpr bool value = false; };
template <class T> struct is_const<const T> { static constexpr bool value = true; };
}  // namespace detail

template <class T>
struct View {
  T* ptr;
  int64_t rows, cols, stride;
  int64_t chunk_step;

  IRIS_DEVICE View<T> chunk(int i) const { return View<T>{ptr + i * chunk_step, rows, cols, stride, chunk_step}; }
  IRIS_DEVICE int64_t tiles(int block_m, int block_n) const;
  // The same window with a read-only element type (for views whose elements are not const already).
  template <class U = T, class = typename ::iris::detail::enable_if<!detail::is_const<U>::value>::type>
  IRIS_DEVICE operator View<const U>() const {
    return View<const U>{ptr, rows, cols, stride, chunk_step};
  }
};

// A read-only view whose element type follows the destination's: a collective's T is deduced from its
// `dst` alone, and a View<float> is accepted where a View<const float> is read.
template <class T>
using SourceView = View<const typename detail::same<T>::type>;

template <class T>
IRIS_DEVICE View<T> view(T* ptr, int64_t rows, int64_t cols, int64_t stride, int64_t chunk_step = 0) {
  return View<T>{ptr, rows, cols, stride, chunk_step};
}

struct Tile {
  int64_t index;     // row-major position among the view's tiles
  int64_t row, col;  // first element
  int rows, cols;    // extent, cut at the view's edges
};

// Tile `index` of a rows x cols view cut into block_m x block_n tiles.
IRIS_DEVICE Tile tile(int64_t index, int64_t rows, int64_t cols, int block_m, int block_n);
template <class T>
IRIS_DEVICE Tile tile(int64_t index, const View<T>& v, int block_m, int block_n) {
  return tile(index, v.rows, v.cols, block_m, block_n);
}

struct Team {
  Context ctx;
  uint64_t members;  // bit r: rank r takes part
  int size;          // members
  int index;         // the current rank's position among them

  IRIS_DEVICE int rank_of(int i) const;  // the global rank of member i
  IRIS_DEVICE int rank() const { return ctx.rank; }
};
// Every rank of the context, or the ranks in `members` (which must include the current rank).
IRIS_DEVICE Team team(const Context& ctx);
IRIS_DEVICE Team team(const Context& ctx, uint64_t members);

enum Step : int { kReady = 1, kStaged = 2, kFinal = 3, kDone = 4 };

// The Sync for user kernels (see above): `flags` is the symmetric array, `index` this tile's flag.
struct TileFlags {
  uint64_t* flags;
  int64_t index;
  uint64_t epoch;
  Context ctx;

  IRIS_DEVICE bool active(int) const { return true; }
  IRIS_DEVICE void publish(int step) const;
  IRIS_DEVICE void wait(int rank, int step) const;
};
IRIS_DEVICE TileFlags tile_flags(const Context& ctx, uint64_t* flags, int64_t index, uint64_t epoch) {
  return TileFlags{flags, index, epoch, ctx};
}

// ---- Iris's tile-level collectives --------------------------------------------------------------
// `src` and `dst` views have the tile's geometry (the same rows and columns). Unless said otherwise a
// call returns when this rank's part of `dst` for the tile is final, and the members may still be
// reading this rank's `src`: change `src` only after a later step everyone waits for (the next epoch
// of the same flags, a device barrier).

// Publishes kReady, reads the tile of every member's `src`, reduces, writes the local `dst`. In place
// (`dst` is `src`), it publishes kStaged once it has read, and waits for every member's kStaged
// before writing.
template <class T, class Sync>
IRIS_DEVICE void all_reduce_one_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op = Op::sum);

// The tile's owner (member tile.index % size) waits for every member's kReady, reduces their `src`
// tiles and writes the result into every member's `dst`, then publishes kDone; the others publish
// kReady and wait for the owner's kDone. In place is safe.
template <class T, class Sync>
IRIS_DEVICE void all_reduce_two_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op = Op::sum);

// The member after the owner (tile.index % size) starts: each next member reads its predecessor's
// partial (the starter's `src`, later ones' `dst`), combines its own `src`, writes its `dst`
// (kStaged; the owner's is final: kFinal); then the final value travels the same way (kFinal).
// Partial results are stored in T between members. In place is safe.
template <class T, class Sync>
IRIS_DEVICE void all_reduce_ring(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                 const Sync& sync, Op op = Op::sum);

// Copies `src` into the local `dst` (kStaged), then combines `src` into every member's `dst` with
// atomics once that member's kStaged is there, publishes kDone and waits for every member's kDone.
// Types and operations without a hardware atomic use a compare-and-swap loop on the enclosing
// 4-byte word; 16-bit floats round at each step. In place is safe.
template <class T, class Sync>
IRIS_DEVICE void all_reduce_atomic(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                   const Sync& sync, Op op = Op::sum);

// As all_reduce_atomic, but each member's `dst` tile is read, combined and written under that
// member's lock `*lock` (a symmetric uint32 that is 0 when free; the same lock for every member's copy
// of the tile; several tiles may share one).
template <class T, class Sync>
IRIS_DEVICE void all_reduce_spinlock(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, uint32_t* lock, Op op = Op::sum);

// Writes this rank's `src` tile into chunk `team.index` of every member's `dst` (once that member's
// kReady is there), publishes kDone and waits for every member's kDone: then the tile of every
// chunk of the local `dst` is there.
template <class T, class Sync>
IRIS_DEVICE void all_gather(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync);

// Waits for `from_rank`'s kReady and copies its `src` tile into the local `dst` (which may be any
// local memory of the tile's shape, shared memory included). Publishes nothing: the source publishes
// kReady itself (ready() below, or any collective on the same flags).
template <class T, class Sync>
IRIS_DEVICE void gather(const Team& team, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                        const Sync& sync);

// Chunk j of this rank's `src` goes to chunk team.index of member j's `dst` (the tile is a tile of one
// chunk), once member j's kReady is there; then kDone, and every member's kDone is waited for.
template <class T, class Sync>
IRIS_DEVICE void all_to_all(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync);

// Publishes kReady, reduces chunk team.index of every member's `src` (the tile is a tile of one chunk)
// and writes it into the local `dst`.
template <class T, class Sync>
IRIS_DEVICE void reduce_scatter(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                const Sync& sync, Op op = Op::sum);

// The rooted collectives (ctx.ccl.reduce, gather, scatter); `root` is a global rank of the team.
// reduce: the tile's owner (member tile.index % size) waits for every member's kReady, reduces their
// `src` tiles and writes the result into `root`'s `dst`, then publishes kDone; `root`, when it is not
// the owner, publishes kReady and waits for the owner's kDone; the others publish kReady. In place is
// safe (only the owner reads the tile, and writes it once it has read every member's).
template <class T, class Sync>
IRIS_DEVICE void reduce(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int root,
                        const Sync& sync, Op op = Op::sum);

// gather_to: every member publishes kReady; `root` copies the tile of every member's `src` into chunk
// (that member's index) of its local `dst`, once that member's kReady is there, then publishes kDone.
// `src_is_chunk`: each member's source is its own chunk of its `dst` (in place), not `src`.
template <class T, class Sync>
IRIS_DEVICE void gather_to(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int root,
                           const Sync& sync, bool src_is_chunk = false);

// scatter: `root` publishes kReady; every member copies chunk (its index) of root's `src` tile (the tile
// is a tile of one chunk) into its local `dst` once root's kReady is there, then publishes kDone.
template <class T, class Sync>
IRIS_DEVICE void scatter(const Team& team, const Tile& tile, SourceView<T> src, int root, View<T> dst,
                         const Sync& sync);

// Publishes kReady for the tile (after __syncthreads(): the block's writes to it are covered).
template <class Sync>
IRIS_DEVICE void ready(const Sync& sync);

// ---- Tile data movement (no synchronization) -------------------------------------------------------
// Reduces the tile of `src` over every member of `team` (each member's copy) and writes the result to
// `dst` in rank `to_rank`'s heap.
template <class T>
IRIS_DEVICE void reduce_tile(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int to_rank,
                             Op op = Op::sum);
// Copies the tile of `src` in `from_rank`'s heap to `dst` in `to_rank`'s heap.
template <class T>
IRIS_DEVICE void copy_tile(const Context& ctx, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                           int to_rank);

}  // namespace ccl
}  // namespace iris

#include "impl/ccl_types.hpp"
#include "impl/ccl_fragment.hpp"
#include "impl/ccl_tile.hpp"

#endif  // IRIS_CCL_HPP
