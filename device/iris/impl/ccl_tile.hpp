// Iris's tile-level collectives and the tile data movement under them (ccl.hpp documents them).
#ifndef IRIS_IMPL_CCL_TILE_HPP
#define IRIS_IMPL_CCL_TILE_HPP

namespace iris {
namespace ccl {
namespace detail {

// The block's writes (and reads) so far are covered by one thread's release.
template <class Sync>
IRIS_DEVICE void publish(const Sync& sync, int step) {
  __syncthreads();
  if (thread_index() == 0) sync.publish(step);
}

// Until every other member published `step`; the block goes on together.
template <class Sync>
IRIS_DEVICE void wait_members(const Team& team, const Sync& sync, int step) {
  for (int i = thread_index(); i < team.size; i += thread_count()) {
    const int r = team.rank_of(i);
    if (r != team.rank()) sync.wait(r, step);
  }
  __syncthreads();
}

template <class Sync>
IRIS_DEVICE void wait_one(const Sync& sync, int rank, int step) {
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

// f = the tile of `src` reduced over the members, in member order (every rank that reduces the same
// tile gets the same bits).
template <class T, int V>
IRIS_DEVICE void reduce_members(Fragment<T, V>& f, const Team& team, SourceView<T> src, const Shape& s, Op op) {
  for (int i = 0; i < team.size; ++i) {
    const T* p = on(team, src.ptr, team.rank_of(i));
    if (i == 0) {
      f.load(p, src.stride, s);
    } else {
      f.combine_with(p, src.stride, s, op);
    }
  }
}

template <class T>
IRIS_DEVICE bool same_view(const View<const T>& a, const View<T>& b) {
  return a.ptr == b.ptr && (a.rows == 1 || a.stride == b.stride);
}

// Takes `lock` (0 free, 1 held) in whatever heap it is, bounded like wait_until.
IRIS_DEVICE void acquire_lock(uint32_t* lock) {
  long long budget = __iris_module_state.wait_timeout_ns;
  if (budget <= 0) budget = 10000000000ll;
  const unsigned long long start = ::iris::detail::clock_ns();
  for (unsigned int spin = 1;; ++spin) {
    const uint32_t seen = ::iris::detail::cas(lock, 0u, 1u, acquire, sys);
    if (seen == 0u) return;
    if ((spin & 63u) == 0u) {
      const unsigned long long waited = ::iris::detail::clock_ns() - start;
      if (waited > static_cast<unsigned long long>(budget)) {
        ::iris::detail::give_up_waiting("iris::ccl spinlock", lock, seen, 0, Cmp::eq, waited);
      }
    }
    ::iris::detail::pause();
  }
}

// Member i, counting from this rank's own index: each rank starts its round of peers at a different
// one, so they do not all hit the same rank at once.
IRIS_DEVICE int rotated(const Team& team, int i) { return team.rank_of((team.index + i) % team.size); }

}  // namespace detail

template <class Sync>
IRIS_DEVICE void ready(const Sync& sync) {
  detail::publish(sync, kReady);
}

template <class T>
IRIS_DEVICE void reduce_tile(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, int to_rank, Op op) {
  detail::check_capacity(tile);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    detail::reduce_members(f, team, src, s, op);
    f.store(detail::on(team, dst.ptr, to_rank), dst.stride, s);
  }, src, dst);
}

template <class T>
IRIS_DEVICE void copy_tile(const Context& ctx, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                           int to_rank) {
  detail::check_capacity(tile);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    f.load(ctx.translate(src.ptr, from_rank), src.stride, s);
    f.store(ctx.translate(dst.ptr, to_rank), dst.stride, s);
  }, src, dst);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_one_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op) {
  detail::check_capacity(tile);
  detail::publish(sync, kReady);
  detail::wait_members(team, sync, kReady);
  const bool in_place = detail::same_view(src, dst);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    detail::reduce_members(f, team, src, s, op);
    if (in_place) {  // nobody may still need this rank's input when it is overwritten
      detail::publish(sync, kStaged);
      detail::wait_members(team, sync, kStaged);
    }
    f.store(dst.ptr, dst.stride, s);
  }, src, dst);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_two_shot(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, Op op) {
  detail::check_capacity(tile);
  const int owner = team.rank_of(static_cast<int>(tile.index % team.size));
  if (owner != team.rank()) {
    detail::publish(sync, kReady);
    detail::wait_one(sync, owner, kDone);
    return;
  }
  detail::wait_members(team, sync, kReady);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    detail::reduce_members(f, team, src, s, op);
    for (int i = 0; i < team.size; ++i) f.store(detail::on(team, dst.ptr, detail::rotated(team, i)), dst.stride, s);
  }, src, dst);
  detail::publish(sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_ring(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                 const Sync& sync, Op op) {
  detail::check_capacity(tile);
  const int size = team.size;
  const int owner = static_cast<int>(tile.index % size);
  const int position = (team.index - owner - 1 + 2 * size) % size + 1;  // 1: starts, size: owns
  const int pred = team.rank_of((team.index + size - 1) % size);
  detail::publish(sync, kReady);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    if (size == 1) {
      f.load(src.ptr, src.stride, s);
      f.store(dst.ptr, dst.stride, s);
      return;
    }
    if (position >= 2) {  // the partial sum comes around: the starter's input, then the others' outputs
      detail::wait_one(sync, pred, position == 2 ? kReady : kStaged);
      if (position == 2) {
        f.load(detail::on(team, src.ptr, pred), src.stride, s);
      } else {
        f.load(detail::on(team, const_cast<const T*>(dst.ptr), pred), dst.stride, s);
      }
      f.combine_with(src.ptr, src.stride, s, op);
      f.store(dst.ptr, dst.stride, s);
      detail::publish(sync, position == size ? kFinal : kStaged);
    }
    if (position < size) {  // then the final value
      detail::wait_one(sync, pred, kFinal);
      f.load(detail::on(team, const_cast<const T*>(dst.ptr), pred), dst.stride, s);
      f.store(dst.ptr, dst.stride, s);
      detail::publish(sync, kFinal);
    }
  }, src, dst);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_atomic(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                   const Sync& sync, Op op) {
  detail::check_capacity(tile);
  const bool in_place = detail::same_view(src, dst);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    f.load(src.ptr, src.stride, s);  // in place, peers add into it only after kStaged: it is read first
    if (!in_place) f.store(dst.ptr, dst.stride, s);
    detail::publish(sync, kStaged);
    for (int i = 1; i < team.size; ++i) {
      const int r = detail::rotated(team, i);
      detail::wait_one(sync, r, kStaged);
      f.combine_atomically_into(detail::on(team, dst.ptr, r), dst.stride, s, op);
    }
  }, src, dst);
  detail::publish(sync, kDone);
  detail::wait_members(team, sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void all_reduce_spinlock(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                     const Sync& sync, uint32_t* lock, Op op) {
  detail::check_capacity(tile);
  const bool in_place = detail::same_view(src, dst);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> mine, theirs;
    mine.load(src.ptr, src.stride, s);
    if (!in_place) mine.store(dst.ptr, dst.stride, s);
    detail::publish(sync, kStaged);
    for (int i = 1; i < team.size; ++i) {
      const int r = detail::rotated(team, i);
      detail::wait_one(sync, r, kStaged);
      uint32_t* their_lock = detail::on(team, lock, r);
      if (detail::thread_index() == 0) detail::acquire_lock(their_lock);
      __syncthreads();
      T* theirs_at = detail::on(team, dst.ptr, r);
      theirs.load(theirs_at, dst.stride, s);
      theirs.combine_with(mine, s, op);
      theirs.store(theirs_at, dst.stride, s);
      __syncthreads();  // the whole block's stores come before the release
      if (detail::thread_index() == 0) ::iris::detail::atomic_store(their_lock, 0u, release, sys);
    }
  }, src, dst);
  detail::publish(sync, kDone);
  detail::wait_members(team, sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void all_gather(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync) {
  detail::check_capacity(tile);
  detail::publish(sync, kReady);
  const View<T> mine = dst.chunk(team.index);
  detail::with_width<T>(tile, [&](auto w) {
    constexpr int V = decltype(w)::value;
    const detail::Shape s = detail::shape_of<V>(tile);
    detail::Fragment<T, V> f;
    f.load(src.ptr, src.stride, s);
    for (int i = 0; i < team.size; ++i) {
      const int r = detail::rotated(team, i);
      if (r != team.rank()) detail::wait_one(sync, r, kReady);
      f.store(detail::on(team, mine.ptr, r), mine.stride, s);
    }
  }, src, mine);
  detail::publish(sync, kDone);
  detail::wait_members(team, sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void gather(const Team& team, const Tile& tile, SourceView<T> src, int from_rank, View<T> dst,
                        const Sync& sync) {
  if (from_rank != team.rank()) detail::wait_one(sync, from_rank, kReady);
  copy_tile(team.ctx, tile, src, from_rank, dst, team.rank());
}

template <class T, class Sync>
IRIS_DEVICE void all_to_all(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst, const Sync& sync) {
  detail::check_capacity(tile);
  detail::publish(sync, kReady);
  const View<T> mine = dst.chunk(team.index);
  for (int i = 0; i < team.size; ++i) {
    const int j = (team.index + i) % team.size;
    const int r = team.rank_of(j);
    if (r != team.rank()) detail::wait_one(sync, r, kReady);
    copy_tile(team.ctx, tile, src.chunk(j), team.rank(), mine, r);
  }
  detail::publish(sync, kDone);
  detail::wait_members(team, sync, kDone);
}

template <class T, class Sync>
IRIS_DEVICE void reduce_scatter(const Team& team, const Tile& tile, SourceView<T> src, View<T> dst,
                                const Sync& sync, Op op) {
  detail::publish(sync, kReady);
  detail::wait_members(team, sync, kReady);
  reduce_tile(team, tile, src.chunk(team.index), dst, team.rank(), op);
}

}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_TILE_HPP
