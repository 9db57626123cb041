// The data path of every tile-level collective: a thread's share of a tile in registers.
//
// A tile is cut into units of V = 16 bytes / element size consecutive elements of one row (the last
// unit of a row may be shorter). A unit moves as one 16-byte access when it is whole and the view
// starts every tile row on a 16-byte boundary, else element by element. A Fragment holds the whole
// tile, as Iris's tiles are held: U units per thread (kTileElements elements, or one unit of bytes),
// units t, t + n, ... for thread t of n, so a block needs (tile units) / U threads. Values are
// accumulated in float for the 16-bit floats, transformed for the reduction (ccl_types.hpp) from load
// to store. Loads and stores are plain; the callers order them with signals and waits. Fragments are
// of storage types (unsigned integers, the float types): the collectives cast their views to them.
//
// One instantiation per element type, and the element-wise path shares the combining code with the
// 16-byte one: NVRTC's time grows with the code (every collective instantiates this for 12 types).
#ifndef IRIS_IMPL_CCL_FRAGMENT_HPP
#define IRIS_IMPL_CCL_FRAGMENT_HPP

namespace iris {
namespace ccl {
namespace detail {

// Elements per thread (a unit of 16 bytes when that is more). The cpu backend runs a block's threads one
// after another, each a function call: fewer, fuller threads cost less there.
// (impl/abi.h: ccl.lua sizes the collectives' blocks from the same numbers.)
#if defined(IRIS_PLATFORM_CPU)
constexpr int kTileElements = IRIS_CCL_TILE_ELEMENTS_CPU;
#else
constexpr int kTileElements = IRIS_CCL_TILE_ELEMENTS_GPU;
#endif

template <class E>
IRIS_DEVICE constexpr int vector_width() { return static_cast<int>(IRIS_CCL_UNIT_BYTES / sizeof(E)); }

// V elements moved as one access.
template <class E, int V>
struct alignas(sizeof(E) * V) Pack {
  E e[V];
};

// Where the units of a tile are: unit u is row u / per_row of the tile, its first column
// (u % per_row) * width, and `cols` columns of the tile exist.
struct Shape {
  int64_t row, col;
  int per_row, count, width, cols;
  IRIS_DEVICE int64_t offset(int u, int64_t stride) const {
    return (row + u / per_row) * stride + col + static_cast<int64_t>(u % per_row) * width;
  }
  IRIS_DEVICE int valid(int u) const {  // elements of unit u inside the tile
    const int rest = cols - (u % per_row) * width;
    return rest < width ? rest : width;
  }
};

template <class S>
IRIS_DEVICE Shape shape_of(const Tile& t) {
  constexpr int V = vector_width<S>();
  Shape s;
  s.row = t.row;
  s.col = t.col;
  s.per_row = (t.cols + V - 1) / V;
  s.count = t.rows * s.per_row;
  s.width = V;
  s.cols = t.cols;
  return s;
}

// Where a view's tile rows start on 16-byte boundaries (so whole units move as 16-byte accesses).
struct Where {
  int64_t stride;
  bool aligned;
};

template <class E>
IRIS_DEVICE Where where(const View<E>& v, const Tile& t) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(v.ptr + t.row * v.stride + t.col);
  const bool rows_aligned = t.rows == 1 || (static_cast<uint64_t>(v.stride) * sizeof(E)) % 16 == 0;
  return Where{v.stride, first % 16 == 0 && rows_aligned};
}

IRIS_DEVICE int thread_index() { return static_cast<int>(::iris::detail::block_thread_index()); }
IRIS_DEVICE int thread_count() { return static_cast<int>(::iris::detail::block_thread_count()); }

template <class E, int V>
IRIS_DEVICE Pack<E, V> load_unit(const E* p, int valid, bool aligned) {
  if (aligned && valid == V) return *reinterpret_cast<const Pack<E, V>*>(p);
  Pack<E, V> pack;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (j < valid) pack.e[j] = p[j];
  }
  return pack;
}

template <class E, int V>
IRIS_DEVICE void store_unit(E* p, const Pack<E, V>& pack, int valid, bool aligned) {
  if (aligned && valid == V) {
    *reinterpret_cast<Pack<E, V>*>(p) = pack;
    return;
  }
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (j < valid) p[j] = pack.e[j];
  }
}

template <class S> IRIS_HOST_DEVICE constexpr int units_per_thread() {
  return kTileElements / vector_width<S>() > 0 ? kTileElements / vector_width<S>() : 1;
}

template <class S>
struct Fragment {
  typedef typename accumulator<S>::type A;
  static constexpr int V = vector_width<S>();
  static constexpr int U = units_per_thread<S>();
  typedef Pack<S, V> P;

  A v[U][V];

  // v = the units of the tile at `base` (any rank's copy, as this rank addresses it).
  IRIS_DEVICE void load(const S* base, Where w, const Shape& s, const Reduction& r) { read<false>(base, w, s, r); }

  // v = v (op) the units at `base`.
  IRIS_DEVICE void combine_with(const S* base, Where w, const Shape& s, const Reduction& r) {
    read<true>(base, w, s, r);
  }

  // v = v (op) other.v.
  IRIS_DEVICE void combine_with(const Fragment& other, const Shape& s, const Reduction& r) {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (t + k * n < s.count) combine_unit(v[k], other.v[k], r.base);
    }
  }

  IRIS_DEVICE void store(S* base, Where w, const Shape& s, const Reduction& r) const {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        P p;
#pragma unroll
        for (int j = 0; j < V; ++j) p.e[j] = from_accumulator<S>(transform(v[k][j], r));
        store_unit<S, V>(base + s.offset(u, w.stride), p, s.valid(u), w.aligned);
      }
    }
  }

  template <bool Combine>
  IRIS_DEVICE void read(const S* base, Where w, const Shape& s, const Reduction& r) {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        const P p = load_unit<S, V>(base + s.offset(u, w.stride), s.valid(u), w.aligned);
        A x[V];
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = transform(to_accumulator<A>(p.e[j]), r);
        if (Combine) {
          combine_unit(v[k], x, r.base);
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) v[k][j] = x[j];
        }
      }
    }
  }

  // Every element e of the units at `base`: e = e (op) v, atomically.
  IRIS_DEVICE void combine_atomically_into(S* base, Where w, const Shape& s, const Reduction& r) const {
    const int t = thread_index(), n = thread_count();
    for (int k = 0; k < U; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        S* p = base + s.offset(u, w.stride);
        const int valid = s.valid(u);
        for (int j = 0; j < valid; ++j) atomic_combine(p + j, from_accumulator<S>(transform(v[k][j], r)), r);
      }
    }
  }
};

// A Fragment holds the whole tile: the block must have threads enough. detail::fail, not a bare trap,
// so that the message reaches the host on a GPU too (the mailbox).
template <class S>
IRIS_DEVICE void check_capacity(const Shape& s) {
  if (s.count > units_per_thread<S>() * thread_count()) {
    ::iris::detail::fail("iris::ccl: a tile has more elements than the block's threads hold (8 each, 64 on the cpu "
                         "backend, at least 16 bytes); launch more threads per block or use smaller tiles");
  }
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_FRAGMENT_HPP
