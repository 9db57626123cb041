// What every platform's matrix multiplication shares (gemm.hpp documents the calls): the shared-memory
// arena, the layout of operand tiles in it, staging operands from global memory, and the k loop.
//
// Shared memory holds kStages steps of k, each an A tile and a B tile of 8 KiB: 128 rows (of A's m or
// B's n) of 64 bytes of k (k-major: 32 16-bit or 16 float elements), or kK rows of 128 elements when
// the operand's contiguous dimension is m or n (mn-major). Rows are made of 16-byte chunks whose order
// is XOR-swizzled by the row, so the eight rows one matrix instruction reads (ldmatrix, or eight lanes'
// loads) fall on different banks.
//
// Where 16-bit inputs go through Hopper's wgmma (IRIS_GEMM_WGMMA, below), wgmma reads the tiles from
// shared memory itself, through descriptors of its own swizzled layouts: a k-major tile above already
// is its 64-byte swizzle (8-row atoms of 64 bytes, chunk ^ (row / 2) % 4); an mn-major 16-bit tile is
// stored as two halves of 64 columns, each kK rows of 128 bytes with chunk ^ row % 8, which is its
// 128-byte swizzle (atoms of 64 columns x 8 rows, the halves 4 KiB apart). Those swizzles repeat from
// 512- and 1024-byte boundaries, so the arena is aligned to 1 KiB there.
#ifndef IRIS_IMPL_GEMM_LAYOUT_HPP
#define IRIS_IMPL_GEMM_LAYOUT_HPP

// wgmma (warpgroup matrix multiply-accumulate) exists only in sm_90a's arch-specific instruction set:
// NVRTC and nvcc define __CUDA_ARCH_FEAT_SM90_ALL when they compile for it (iris-lua asks NVRTC for
// sm_90a on a compute capability 9.0 GPU). Plain sm_90, sm_80, sm_89, sm_100+, AMD and the cpu backend
// keep mma.sync (or MFMA) for every input type.
#if defined(IRIS_PLATFORM_CUDA) && defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#if __CUDA_ARCH__ == 900
#define IRIS_GEMM_WGMMA 1
#endif
#endif

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

#if defined(IRIS_GEMM_WGMMA)
constexpr int kArenaAlignment = 1024;  // wgmma's 128-byte swizzle repeats from 1 KiB boundaries
#else
constexpr int kArenaAlignment = 128;
#endif

IRIS_DEVICE uint8_t* arena() {
  __shared__ __align__(kArenaAlignment) uint8_t bytes[kSharedBytes];
  return bytes;
}

// kUsesWgmma<T>: whether multiply() of T runs on wgmma (warpgroups) rather than on the platform's warp
// tiles: 16-bit inputs where IRIS_GEMM_WGMMA. float32 stays on mma.sync there: wgmma takes tf32 only
// k-major, and float32's staged tiles are m- or n-major whenever an operand is.
#if defined(IRIS_GEMM_WGMMA)
template <class T> constexpr bool kUsesWgmma = sizeof(T) == 2;
#else
template <class T> constexpr bool kUsesWgmma = false;
#endif

// What Accumulator::layout says (gemm.hpp): which instruction's element positions v holds. A kernel
// gets both only on sm_90a (a 16-bit and a float32 multiply in one compile); elsewhere position() has
// one layout and never reads it.
constexpr int kCleared = 0;     // clear()'s zeros: in any layout
constexpr int kWarpTiles = 1;   // the platform's warp tiles: mma.sync (and the cpu backend's emulation), MFMA
constexpr int kWarpgroups = 2;  // wgmma's: warpgroup g holds rows 64 g .. 64 g + 63, all columns

template <class T> constexpr int kLayoutOf = kUsesWgmma<T> ? kWarpgroups : kWarpTiles;

IRIS_DEVICE int thread_index() { return static_cast<int>(::iris::detail::block_thread_index()); }

// Byte offset of chunk `chunk` of row `row` in a tile whose rows have `chunks` 16-byte chunks: 4 (a
// k-major row of 64 bytes: two rows share a 128-byte line, so pairs of rows swizzle alike) or 16 and
// 32 (an mn-major row of 128 elements). With wgmma a 16-bit mn-major tile (16 chunks a row) is two
// halves of 64 columns (see the top).
IRIS_DEVICE int offset(int row, int chunk, int chunks) {
#if defined(IRIS_GEMM_WGMMA)
  if (chunks == 16) return (chunk >> 3) * 4096 + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
#endif
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
