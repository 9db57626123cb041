// A thread's share of a tile, held in registers: the data path of every tile-level collective.
//
// A tile is cut into units of V contiguous elements of one row: V = 16 bytes / element size when every
// view the tile touches starts each tile row on a 16-byte boundary and the tile's width divides by V
// (one 16-byte access per unit), else V = 1. Thread t of n holds units t, t + n, t + 2n, ...: up to 32
// elements, accumulated in float for the 16-bit floats. Loads and stores are plain; the callers order
// them with signals and waits.
#ifndef IRIS_IMPL_CCL_FRAGMENT_HPP
#define IRIS_IMPL_CCL_FRAGMENT_HPP

namespace iris {
namespace ccl {
namespace detail {

constexpr int kTileElementsPerThread = 32;

template <int V> struct Width { static constexpr int value = V; };

template <class E>
IRIS_DEVICE constexpr int vector_width() { return static_cast<int>(16 / sizeof(E)); }

// V elements moved as one access.
template <class E, int V>
struct alignas(sizeof(E) * V) Pack {
  E e[V];
};

// Where the units of a tile are: unit u is row u / per_row of the tile, columns (u % per_row) * V on.
struct Shape {
  int64_t row, col;
  int per_row, count, width;
  IRIS_DEVICE int64_t offset(int u, int64_t stride) const {
    return (row + u / per_row) * stride + col + static_cast<int64_t>(u % per_row) * width;
  }
};

template <int V>
IRIS_DEVICE Shape shape_of(const Tile& t) {
  Shape s;
  s.row = t.row;
  s.col = t.col;
  s.per_row = t.cols / V;
  s.count = t.rows * s.per_row;
  s.width = V;
  return s;
}

IRIS_DEVICE int thread_index() { return static_cast<int>(::iris::detail::block_thread_index()); }
IRIS_DEVICE int thread_count() { return static_cast<int>(::iris::detail::block_thread_count()); }

template <class T, int V>
struct Fragment {
  typedef typename remove_const<T>::type E;
  typedef typename accumulator<E>::type A;
  static constexpr int kUnits = kTileElementsPerThread / V;
  typedef Pack<E, V> P;

  A v[kUnits][V];

  // v = the tile of the view at `base` (any rank's copy, as this rank addresses it).
  IRIS_DEVICE void load(const E* base, int64_t stride, const Shape& s) {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        const P p = *reinterpret_cast<const P*>(base + s.offset(u, stride));
#pragma unroll
        for (int j = 0; j < V; ++j) v[k][j] = to_accumulator<A>(p.e[j]);
      }
    }
  }

  // v = combine(v, the tile at `base`).
  IRIS_DEVICE void combine_with(const E* base, int64_t stride, const Shape& s, Op op) {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        const P p = *reinterpret_cast<const P*>(base + s.offset(u, stride));
#pragma unroll
        for (int j = 0; j < V; ++j) v[k][j] = combine(v[k][j], to_accumulator<A>(p.e[j]), op);
      }
    }
  }

  // v = combine(v, other.v), unit by unit.
  IRIS_DEVICE void combine_with(const Fragment& other, const Shape& s, Op op) {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      if (t + k * n < s.count) {
#pragma unroll
        for (int j = 0; j < V; ++j) v[k][j] = combine(v[k][j], other.v[k][j], op);
      }
    }
  }

  IRIS_DEVICE void store(E* base, int64_t stride, const Shape& s) const {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        P p;
#pragma unroll
        for (int j = 0; j < V; ++j) p.e[j] = from_accumulator<E>(v[k][j]);
        *reinterpret_cast<P*>(base + s.offset(u, stride)) = p;
      }
    }
  }

  // Every element e of the tile at `base`: e = combine(e, v) atomically.
  IRIS_DEVICE void combine_atomically_into(E* base, int64_t stride, const Shape& s, Op op) const {
    const int t = thread_index(), n = thread_count();
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      const int u = t + k * n;
      if (u < s.count) {
        E* p = base + s.offset(u, stride);
#pragma unroll
        for (int j = 0; j < V; ++j) atomic_combine(p + j, from_accumulator<E>(v[k][j]), op);
      }
    }
  }
};

// Whether rows of the tile in the view at `ptr` start on 16-byte boundaries.
template <class E>
IRIS_DEVICE bool rows_aligned(const E* ptr, int64_t stride, const Tile& t) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(ptr + t.row * stride + t.col);
  return first % 16 == 0 && (t.rows == 1 || (static_cast<uint64_t>(stride) * sizeof(E)) % 16 == 0);
}

// A block holds a tile in registers: it must have threads enough.
IRIS_DEVICE void check_capacity(const Tile& t) {
  if (static_cast<int64_t>(t.rows) * t.cols > static_cast<int64_t>(kTileElementsPerThread) * thread_count()) {
    ::iris::detail::trap("iris::ccl: the tile has more than 32 elements per thread of the block; launch more threads "
                         "per block or use smaller tiles");
  }
}

// body(Width<V>()) with the widest V every view allows for this tile.
template <class E, class Body, class... Views>
IRIS_DEVICE void with_width(const Tile& t, Body body, const Views&... views) {
  constexpr int V = vector_width<E>();
  if (V > 1 && t.cols % V == 0 && (rows_aligned(views.ptr, views.stride, t) && ...)) {
    body(Width<V>());
  } else {
    body(Width<1>());
  }
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_FRAGMENT_HPP
