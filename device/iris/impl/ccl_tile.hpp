// Iris's tile-level collectives and the tile data movement under them (ccl.hpp documents them).
#ifndef IRIS_IMPL_CCL_TILE_HPP
#define IRIS_IMPL_CCL_TILE_HPP

namespace iris {
namespace ccl {
namespace detail {

// The block's writes (and reads) so far are covered by one thread's release.
// Steps a Sync does not need (active() false) cost no barrier either.
template <class Sync>
IRIS_DEVICE void publish(const Sync& sync, int step) {
  if (!sync.active(step)) return;
  __syncthreads();
  if (thread_index() == 0) sync.publish(step);
}

// Until every other member published `step`; the block goes on together.
template <class Sync>
IRIS_DEVICE void wait_members(const Team& team, const Sync& sync, int step) {
  if (!sync.active(step)) return;
  for (int i = thread_index(); i < team.size; i += thread_count()) {
    const int r = team.rank_of(i);
    if (r != team.rank()) sync.wait(r, step);
  }
  __syncthreads();
}

template <class Sync>
IRIS_DEVICE void wait_one(const Sync& sync, int rank, int step) {
  if (!sync.active(step)) return;
  if (thread_index() == 0) sync.wait(rank, step);
  __syncthreads();
}

template <class T>
IRIS_DEVICE const T* on(const Team& team, const T* p, int rank) {
  return ::iris::translate(p, team.rank(), rank, team.ctx.heap_bases);
}
template <class T>
IRIS_DEVICE T* on(const Team& team, T* p, int rank) {
  return ::iris::translate(p, team.rank(), rank, team.ctx.heap_bases);
}

// Member i, counting from this rank's own index: each rank starts its round of peers at a different
// one, so they do not all hit the same rank at once.
IRIS_DEVICE int rotated(const Team& team, int i) { return team.rank_of((team.index + i) % team.size); }

// The same window over the elements' storage type (see storage in ccl_types.hpp).
template <class T>
IRIS_DEVICE View<const typename storage<T>::type> as_storage(const View<const T>& v) {
  return View<const typename storage<T>::type>{reinterpret_cast<const typename storage<T>::type*>(v.ptr), v.rows, v.cols,
                                               v.stride, v.chunk_step};
}
template <class T>
IRIS_DEVICE View<typename storage<T>::type> as_storage(const View<T>& v) {
  return View<typename storage<T>::type>{reinterpret_cast<typename storage<T>::type*>(v.ptr), v.rows, v.cols, v.stride,
                                         v.chunk_step};
}

template <class S>
IRIS_DEVICE bool same_view(const View<const S>& a, const View<S>& b) {
  return a.ptr == b.ptr && (a.rows == 1 || a.stride == b.stride);
}

// Copies need no reduction: the identity transform.
IRIS_DEVICE Reduction plain() { return Reduction{Base::sum, 0, false}; }

// f = the units of `src` reduced over the members, in member order (every rank that reduces the same
// tile gets the same bits).
template <class S>
IRIS_DEVICE void reduce_members(Fragment<S>& f, const Team& team, const View<const S>& src, Where w, const Shape& s,
                                const Reduction& r) {
  for (int i = 0; i < team.size; ++i) {
    const S* p = on(team, src.ptr, team.rank_of(i));
    if (i == 0) {
      f.load(p, w, s, r);
    } else {
      f.combine_with(p, w, s, r);
    }
  }
}

// The tile of every member's `src`, reduced, into `dst` on `to_rank` (every member when to_rank < 0).
template <class S>
__device__ __noinline__ void reduce_to(Team team, Tile tile, View<const S> src, View<S> dst, int to_rank,
                                       Reduction r) {
  const Shape s = shape_of<S>(tile);
  check_capacity<S>(s);
  const Where to = where(dst, tile);
  Fragment<S> f;
  reduce_members(f, team, src, where(src, tile), s, r);
  if (to_rank >= 0) {
    f.store(on(team, dst.ptr, to_rank), to, s, r);
  } else {
    for (int i = 0; i < team.size; ++i) f.store(on(team, dst.ptr, rotated(team, i)), to, s, r);
  }
}

// copy_to's destinations besides one rank.
constexpr int kEveryPeer = -1;    // every member but this rank
constexpr int kEveryMember = -2;  // every member, this rank first

// The tile of `src` on `from_rank` into `dst` on `to_rank`, or on several ranks (kEveryPeer,
// kEveryMember): read once, written to each.
template <class S>
__device__ __noinline__ void copy_to(Team team, Tile tile, View<const S> src, int from_rank, View<S> dst, int to_rank) {
  const Shape s = shape_of<S>(tile);
  check_capacity<S>(s);
  const Where to = where(dst, tile);
  Fragment<S> f;
  f.load(on(team, src.ptr, from_rank), where(src, tile), s, plain());
  if (to_rank >= 0) {
    f.store(on(team, dst.ptr, to_rank), to, s, plain());
  } else {
    for (int i = to_rank == kEveryMember ? 0 : 1; i < team.size; ++i) {
      f.store(on(team, dst.ptr, rotated(team, i)), to, s, plain());
    }
  }
}

// Takes `lock` (0 free, 1 held) in whatever heap it is, bounded like wait_until.
IRIS_DEVICE void acquire_lock(uint32_t* lock) {
  uint32_t seen = 0;
  ::iris::detail::bounded_spin(
      [&] {
        seen = ::iris::detail::cas(lock, 0u, 1u, acquire, sys);
        return seen == 0u;
      },
      [&](unsigned long long waited) {
        ::iris::detail::give_up_waiting("iris::ccl spinlock", lock, seen, 0, Cmp::eq, waited);
      });
}


template <class S, class Sync>
__device__ __noinline__ void one_shot(Team team, Tile tile, View<const S> src, View<S> dst, Sync sync, Reduction r) {
  publish(sync, kReady);
  wait_members(team, sync, kReady);
  const Shape s = shape_of<S>(tile);
  check_capacity<S>(s);
  Fragment<S> f;
  reduce_members(f, team, src, where(src, tile), s, r);
  if (same_view(src, dst)) {  // in place: written once every member has read this rank's copy
    publish(sync, kStaged);
    wait_members(team, sync, kStaged);
  }
  f.store(dst.ptr, where(dst, tile), s, r);
}

template <class S, class Sync>
__device__ __noinline__ void ring(Team team, Tile tile, View<const S> src, View<S> dst, Sync sync, Reduction r) {
  const int size = team.size;
  const int owner = static_cast<int>(tile.index % size);
  const int position = (team.index - owner - 1 + 2 * size) % size + 1;  // 1: starts, size: owns
  const int pred = team.rank_of((team.index + size - 1) % size);
  publish(sync, kReady);
  if (size == 1) {
    if (!same_view(src, dst)) copy_to(team, tile, src, team.rank(), dst, team.rank());
    return;
  }
  if (position >= 2) {  // the partial comes around: the starter's input, then the others' outputs
    wait_one(sync, pred, position == 2 ? kReady : kStaged);
    const Shape s = shape_of<S>(tile);
    check_capacity<S>(s);
    const Where from = where(src, tile), to = where(dst, tile);
    Fragment<S> f;
    if (position == 2) {
      f.load(on(team, src.ptr, pred), from, s, r);
    } else {
      f.load(on(team, const_cast<const S*>(dst.ptr), pred), to, s, r);
    }
    f.combine_with(src.ptr, from, s, r);
    f.store(dst.ptr, to, s, r);
    publish(sync, position == size ? kFinal : kStaged);
  }
  if (position < size) {  // then the final value
    wait_one(sync, pred, kFinal);
    copy_to(team, tile, View<const S>(dst), pred, dst, team.rank());
    publish(sync, kFinal);
  }
}

IRIS_DEVICE void take_lock(const Team& team, uint32_t* lock, int r) {
  if (lock == nullptr) return;
  if (thread_index() == 0) acquire_lock(on(team, lock, r));
  __syncthreads();
}

IRIS_DEVICE void give_lock(const Team& team, uint32_t* lock, int r) {
  if (lock == nullptr) return;
  __syncthreads();  // the whole block's stores come before the release
  if (thread_index() == 0) ::iris::detail::atomic_store(on(team, lock, r), 0u, release, sys);
}

// atomic (lock null) and spinlock: this rank's part goes into its own `dst` (kStaged), then into
// every member's once that member's part is in place there: atomically, or under the member's lock
// read, combined and written back. The part is held in registers from before kStaged, so in place
// the members' additions never reach what this rank adds to the others.
template <class S, class Sync>
__device__ __noinline__ void into_peers(Team team, Tile tile, View<const S> src, View<S> dst, Sync sync,
                                        uint32_t* lock, Reduction red) {
  const Shape s = shape_of<S>(tile);
  check_capacity<S>(s);
  const Where to = where(dst, tile);
  Fragment<S> mine;
  mine.load(src.ptr, where(src, tile), s, red);
  if (!same_view(src, dst)) mine.store(dst.ptr, to, s, red);
  publish(sync, kStaged);
  for (int i = 1; i < team.size; ++i) {
    const int r = rotated(team, i);
    S* theirs = on(team, dst.ptr, r);
    wait_one(sync, r, kStaged);
    if (lock == nullptr) {
      mine.combine_atomically_into(theirs, to, s, red);
    } else {
      take_lock(team, lock, r);
      Fragment<S> g;
      g.load(theirs, to, s, red);
      g.combine_with(mine, s, red);
      g.store(theirs, to, s, red);
      give_lock(team, lock, r);
    }
  }
  publish(sync, kDone);
  wait_members(team, sync, kDone);
}

template <class S, class Sync>
__device__ __noinline__ void gather_all(Team team, Tile tile, View<const S> src, View<S> dst, Sync sync) {
  publish(sync, kReady);
  wait_members(team, sync, kReady);
  copy_to(team, tile, src, team.rank(), dst.chunk(team.index), kEveryMember);
  publish(sync, kDone);
  wait_members(team, sync, kDone);
}

}  // namespace detail

template <class Sync>
IRIS_DEVICE void ready(const Sync& sync) {
  detail::publish(sync, kReady);
}

template <class T>
IRIS_DEVICE void reduce_tile(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int to_rank, Op op) {
  detail::reduce_to(team, tile, detail::as_storage(src), detail::as_storage(dst), to_rank, detail::reduction<T>(op));
}

template <class T>
IRIS_DEVICE void copy_tile(const Context& ctx, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                           int to_rank) {
  detail::copy_to(team(ctx), tile, detail::as_storage(src), from_rank, detail::as_storage(dst), to_rank);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_one_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op) {
  detail::one_shot(team, tile, detail::as_storage(src), detail::as_storage(dst), sync, detail::reduction<T>(op));
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_two_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op) {
  const int owner = team.rank_of(static_cast<int>(tile.index % team.size));
  if (owner != team.rank()) {
    detail::publish(sync, kReady);
    detail::wait_one(sync, owner, kDone);
    return;
  }
  detail::wait_members(team, sync, kReady);
  detail::reduce_to(team, tile, detail::as_storage(src), detail::as_storage(dst), -1, detail::reduction<T>(op));
  detail::publish(sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_ring(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                 const Sync& sync, Op op) {
  detail::ring(team, tile, detail::as_storage(src), detail::as_storage(dst), sync, detail::reduction<T>(op));
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_atomic(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                   const Sync& sync, Op op) {
  detail::into_peers(team, tile, detail::as_storage(src), detail::as_storage(dst), sync, nullptr,
                     detail::reduction<T>(op));
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_spinlock(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, uint32_t* lock, Op op) {
  detail::into_peers(team, tile, detail::as_storage(src), detail::as_storage(dst), sync, lock,
                     detail::reduction<T>(op));
}

template <class T, class Sync>
IRIS_DEVICE void all_gather(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync) {
  detail::gather_all(team, tile, detail::as_storage(src), detail::as_storage(dst), sync);
}

template <class T, class Sync>
IRIS_DEVICE void gather(const Team& team, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                        const Sync& sync) {
  if (from_rank != team.rank()) detail::wait_one(sync, from_rank, kReady);
  detail::copy_to(team, tile, detail::as_storage(src), from_rank, detail::as_storage(dst), team.rank());
}

template <class T, class Sync>
IRIS_DEVICE void all_to_all(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync) {
  detail::publish(sync, kReady);
  detail::wait_members(team, sync, kReady);
  const auto from = detail::as_storage(src);
  const auto mine = detail::as_storage(dst).chunk(team.index);
  for (int i = 0; i < team.size; ++i) {
    const int j = (team.index + i) % team.size;
    detail::copy_to(team, tile, from.chunk(j), team.rank(), mine, team.rank_of(j));
  }
  detail::publish(sync, kDone);
  detail::wait_members(team, sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void reduce_scatter(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                const Sync& sync, Op op) {
  detail::publish(sync, kReady);
  detail::wait_members(team, sync, kReady);
  detail::reduce_to(team, tile, detail::as_storage(src).chunk(team.index), detail::as_storage(dst), team.rank(),
                        detail::reduction<T>(op));
}

template <class T, class Sync>
IRIS_DEVICE void reduce(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int root,
                        const Sync& sync, Op op) {
  const int owner = team.rank_of(static_cast<int>(tile.index % team.size));
  if (owner != team.rank()) {
    detail::publish(sync, kReady);
    if (team.rank() == root) detail::wait_one(sync, owner, kDone);
    return;
  }
  detail::wait_members(team, sync, kReady);
  detail::reduce_to(team, tile, detail::as_storage(src), detail::as_storage(dst), root, detail::reduction<T>(op));
  detail::publish(sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void gather_to(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int root,
                           const Sync& sync, bool src_is_chunk) {
  detail::publish(sync, kReady);
  if (team.rank() != root) return;
  typedef typename detail::storage<T>::type S;
  const View<const S> from = detail::as_storage(src);
  const View<S> to = detail::as_storage(dst);
  for (int i = 0; i < team.size; ++i) {
    const int q = team.rank_of(i);
    if (src_is_chunk && q == root) continue;  // the root's own chunk is in place already
    if (q != root) detail::wait_one(sync, q, kReady);
    detail::copy_to(team, tile, src_is_chunk ? View<const S>(to.chunk(i)) : from, q, to.chunk(i), root);
  }
  detail::publish(sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void scatter(const Team& team, const Tile& tile, SourceView<T> src, int root, View<T> dst,
                         const Sync& sync) {
  if (team.rank() == root) detail::publish(sync, kReady);
  const auto from = detail::as_storage(src).chunk(team.index);
  const auto to = detail::as_storage(dst);
  if (team.rank() != root) detail::wait_one(sync, root, kReady);
  if (!(team.rank() == root && detail::same_view(from, to))) detail::copy_to(team, tile, from, root, to, team.rank());
  detail::publish(sync, kDone);
}

}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_TILE_HPP
