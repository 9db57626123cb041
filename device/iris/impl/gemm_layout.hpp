// What every platform's matrix multiplication shares (gemm.hpp documents the calls): the shared-memory
// arena, the layout of operand tiles in it, staging operands from global memory, and the k loop.
//
// Shared memory holds kStages steps of k, each an A tile and a B tile of 8 KiB: 128 rows (of A's m or
// B's n) of 64 bytes of k (k-major: 32 16-bit or 16 float elements), or kK rows of 128 elements when
// the operand's contiguous dimension is m or n (mn-major). Rows are made of 16-byte chunks whose order
// is XOR-swizzled by the row, so the eight rows one matrix instruction reads (ldmatrix, or eight lanes'
// loads) fall on different banks.
#ifndef IRIS_IMPL_GEMM_LAYOUT_HPP
#define IRIS_IMPL_GEMM_LAYOUT_HPP

namespace iris {
namespace gemm {
namespace detail {

constexpr int kStages = 3;
constexpr int kOperandBytes = 8 * 1024;
constexpr int kStageBytes = 2 * kOperandBytes;
static_assert(kStages * kStageBytes <= kSharedBytes, "the operand stages must fit the arena");

// Elements of a 16-byte chunk, and of one step of k (a 64-byte row of a k-major tile).
template <class T> struct Shape {
  static constexpr int kVector = static_cast<int>(16 / sizeof(T));
  static constexpr int kK = 4 * kVector;
};

IRIS_DEVICE uint8_t* arena() {
  __shared__ __align__(128) uint8_t bytes[kSharedBytes];
  return bytes;
}

IRIS_DEVICE int thread_index() { return static_cast<int>(::iris::detail::block_thread_index()); }

// Byte offset of chunk `chunk` of row `row` in a tile whose rows have `chunks` 16-byte chunks: 4 (a
// k-major row of 64 bytes: two rows share a 128-byte line, so pairs of rows swizzle alike) or 16 and
// 32 (an mn-major row of 128 elements).
IRIS_DEVICE int offset(int row, int chunk, int chunks) {
  const int swizzle = chunks == 4 ? (row >> 1) & 3 : row & 7;
  return row * chunks * 16 + ((chunk ^ swizzle) << 4);
}

// One operand as the block stages it: element (outer, k) of the operand (outer: A's row or B's column)
// is at ptr[outer * outer_stride + k * k_stride].
template <class T>
struct Source {
  const T* ptr;
  int64_t outer_stride, k_stride, outer_extent, k_extent;
  bool k_major;  // tile rows are along outer (k contiguous in the tile), else along k
  bool vector;   // 16-byte chunks can be copied as they are
};

// The operand of tiles whose outer index starts at `outer0` (the tile's row of A or column of B).
// Chunks start at outer0 + a multiple of 16 bytes along the contiguous dimension when it is outer (and
// at multiples of one step of k when it is k), so `vector` asks for that first chunk on a 16-byte
// boundary, not only ptr: cp.async needs aligned addresses and reads other bytes than asked from
// unaligned ones, silently (a reduce_scatter's chunk of B columns at 38 half-precision elements did).
template <class T>
IRIS_DEVICE Source<T> source(const T* ptr, int64_t outer_stride, int64_t k_stride, int64_t outer_extent,
                             int64_t k_extent, int64_t outer0) {
  Source<T> s{ptr, outer_stride, k_stride, outer_extent, k_extent, true, false};
  s.k_major = k_stride == 1 || outer_stride != 1;
  const int64_t other = s.k_major ? outer_stride : k_stride;
  const bool contiguous = s.k_major ? k_stride == 1 : outer_stride == 1;
  s.vector = contiguous && reinterpret_cast<uintptr_t>(ptr + outer0 * outer_stride) % 16 == 0 &&
             (static_cast<uint64_t>(other) * sizeof(T)) % 16 == 0;
  return s;
}

IRIS_DEVICE int64_t clamp_count(int64_t n, int most) { return n < 0 ? 0 : (n > most ? most : n); }

// Element (outer, k) of a staged tile, for the instructions that read operands one element at a time.
template <class T>
IRIS_DEVICE T staged(const uint8_t* tile, bool k_major, int outer, int k) {
  constexpr int V = Shape<T>::kVector;
  if (k_major) return *reinterpret_cast<const T*>(tile + offset(outer, k / V, 4) + (k % V) * sizeof(T));
  return *reinterpret_cast<const T*>(tile + offset(k, outer / V, kTileN / V) + (outer % V) * sizeof(T));
}

IRIS_DEVICE void require_block_shape() {
  if (::iris::detail::block_thread_count() != static_cast<unsigned int>(kThreads)) {
    ::iris::detail::fail("iris::gemm: multiply and store need blocks of exactly 256 threads (gemm::kThreads)");
  }
}

}  // namespace detail
}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_LAYOUT_HPP
