// The k loop and the epilogue, on top of the platform's compute_step and position (gemm_mma.hpp,
// gemm_mfma.hpp).
#ifndef IRIS_IMPL_GEMM_TILE_HPP
#define IRIS_IMPL_GEMM_TILE_HPP

namespace iris {
namespace gemm {
namespace detail {

// Copies the tile of `s` at (outer0, k0) into `tile`: 512 chunks of 16 bytes, two per thread, zeros where
// the operand ends. Vector chunks go through the platform's asynchronous copy (copy16_async: cp.async on
// NVIDIA, completed by wait_async); the others element by element, at once.
template <class T>
IRIS_DEVICE void stage(const Source<T>& s, uint8_t* tile, int64_t outer0, int64_t k0) {
  constexpr int V = Shape<T>::kVector;
  const int chunks = s.k_major ? 4 : kTileM / V;
  for (int c = thread_index(); c < 512; c += kThreads) {
    const int row = c / chunks, chunk = c % chunks;
    int64_t outer, k;
    int valid;
    if (s.k_major) {
      outer = outer0 + row;
      k = k0 + static_cast<int64_t>(chunk) * V;
      valid = outer < s.outer_extent ? static_cast<int>(clamp_count(s.k_extent - k, V)) : 0;
    } else {
      k = k0 + row;
      outer = outer0 + static_cast<int64_t>(chunk) * V;
      valid = k < s.k_extent ? static_cast<int>(clamp_count(s.outer_extent - outer, V)) : 0;
    }
    uint8_t* to = tile + offset(row, chunk, chunks);
    const T* from = s.ptr + outer * s.outer_stride + k * s.k_stride;
    if (s.vector) {
      // Nothing is read past the operand's end, yet the address must still be aligned.
      copy16_async(to, valid > 0 ? from : s.ptr + outer0 * s.outer_stride, valid * static_cast<int>(sizeof(T)));
    } else {
      alignas(16) T values[V];
      const int64_t step = s.k_major ? s.k_stride : s.outer_stride;
#pragma unroll
      for (int j = 0; j < V; ++j) values[j] = j < valid ? from[j * step] : T(0.0f);
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(values);
    }
  }
}

}  // namespace detail

IRIS_DEVICE void clear(Accumulator& acc) {
#pragma unroll
  for (int e = 0; e < Accumulator::kElements; ++e) acc.v[e] = 0.0f;
  acc.layout = detail::kCleared;
}

namespace detail {

// A thread's two chunks of one operand's tile, which are the same for every step of k: where they land
// in the tile and where they are read at k = 0 (step s reads s * advance elements further). `whole`:
// the tile's rows (or columns) are all inside the operand and can be copied 16 bytes at a time, so a
// step of k that lies wholly inside the operand is staged by two copies and no checks.
template <class T>
struct Chunks {
  const T* from[2];
  int to[2];
  int64_t advance;  // elements from one step of k to the next
  bool whole;
};

template <class T>
IRIS_DEVICE Chunks<T> chunks_of(const Source<T>& s, int64_t outer0) {
  constexpr int V = Shape<T>::kVector;
  Chunks<T> c;
  c.advance = static_cast<int64_t>(Shape<T>::kK) * s.k_stride;
  c.whole = s.vector && outer0 + kTileM <= s.outer_extent;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int n = thread_index() + i * kThreads;
    if (s.k_major) {  // rows of 4 chunks along k
      c.to[i] = offset(n / 4, n % 4, 4);
      c.from[i] = s.ptr + (outer0 + n / 4) * s.outer_stride + (n % 4) * V * s.k_stride;
    } else {  // rows of kTileM / V chunks along outer
      constexpr int kRow = kTileM / V;
      c.to[i] = offset(n / kRow, n % kRow, kRow);
      c.from[i] = s.ptr + (outer0 + (n % kRow) * V) * s.outer_stride + (n / kRow) * s.k_stride;
    }
  }
  return c;
}

// Stages step `step` of k of one operand: the two plain copies when the step is whole, else stage().
template <class T>
IRIS_DEVICE void stage_step(const Source<T>& s, const Chunks<T>& c, uint8_t* tile, int64_t outer0, int64_t step) {
  constexpr int kK = Shape<T>::kK;
  if (c.whole && (step + 1) * kK <= s.k_extent) {
    copy16_async(tile + c.to[0], c.from[0] + step * c.advance, 16);
    copy16_async(tile + c.to[1], c.from[1] + step * c.advance, 16);
  } else {
    stage(s, tile, outer0, step * kK);
  }
}

}  // namespace detail

// The k loop: stage kStages - 1 steps ahead, compute on the oldest. One commit per step, empty or not,
// so wait_async<kStages - 2>() always means "the step about to be computed has landed".
template <class T>
IRIS_DEVICE void multiply(Accumulator& acc, const Matrix<T>& a, const Matrix<T>& b, int64_t row, int64_t col) {
  using namespace detail;
  require_block_shape();
  constexpr int kK = Shape<T>::kK;
  const Source<T> sa = source(a.ptr, a.row_stride, a.col_stride, a.rows, a.cols, row);
  const Source<T> sb = source(b.ptr, b.col_stride, b.row_stride, b.cols, b.rows, col);
  const Chunks<T> ca = chunks_of(sa, row), cb = chunks_of(sb, col);
  const auto plan = plan_steps<T>(sa.k_major, sb.k_major);  // the platform's, per instruction
  const int64_t steps = (a.cols + kK - 1) / kK;
#if defined(IRIS_GEMM_WGMMA)
  // Zeros fit any layout; sums of another input type's multiply are where that one put them.
  if (acc.layout != kCleared && acc.layout != kLayoutOf<T>) {
    ::iris::detail::fail("iris::gemm: one accumulator multiplied with 16-bit and float32 inputs, whose sums sm_90a "
                         "places differently (wgmma, mma.sync): clear() it, or use one accumulator per input type");
  }
#endif
  acc.layout = kLayoutOf<T>;
  uint8_t* smem = arena();
  __syncthreads();  // the arena may still be read by the block's previous call
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) {
      stage_step(sa, ca, smem + s * kStageBytes, row, s);
      stage_step(sb, cb, smem + s * kStageBytes + kOperandBytes, col, s);
    }
    commit_async();
  }
  for (int64_t step = 0; step < steps; ++step) {
    wait_async<kStages - 2>();
#if defined(IRIS_GEMM_WGMMA)
    // wgmma reads shared memory through the async proxy: this thread's copies and stores of the step
    // are made visible to it before the barrier lets any warpgroup start.
    if constexpr (kUsesWgmma<T>) fence_async_proxy();
#endif
    __syncthreads();  // every thread's chunks of this step are in; the stage refilled below is no longer read
    const int64_t next = step + kStages - 1;
    if (next < steps) {
      uint8_t* to = smem + (next % kStages) * kStageBytes;
      stage_step(sa, ca, to, row, next);
      stage_step(sb, cb, to + kOperandBytes, col, next);
    }
    commit_async();
    const uint8_t* tile = smem + (step % kStages) * kStageBytes;
    compute_step<T>(acc, tile, tile + kOperandBytes, plan);
  }
  wait_async<0>();
}

template <class F>
IRIS_DEVICE void for_each(const Accumulator& acc, F f) {
#pragma unroll
  for (int e = 0; e < Accumulator::kElements; ++e) {
    int i, j;
    detail::position(acc, e, i, j);
    f(i, j, acc.v[e]);
  }
}

namespace detail {

// Rows of the staged output: each padded by 16 bytes (rows of 128 elements would put every row's
// element j on the same bank), as many rows per pass as the arena holds (a float tile takes two).
template <class U> struct Staging {
  static constexpr int kRowBytes = kTileN * static_cast<int>(sizeof(U)) + 16;
  static constexpr int kRows = (kSharedBytes / kRowBytes) / 16 * 16 < kTileM ? (kSharedBytes / kRowBytes) / 16 * 16 : kTileM;
};

// Rows [0, rows) x columns [0, cols) of the staged output to dst (row stride `stride` elements): whole
// 16-byte chunks where dst's rows allow, else element by element.
template <class U>
IRIS_DEVICE void write_rows(const uint8_t* staged_rows, U* dst, int64_t stride, int rows, int cols) {
  constexpr int V = static_cast<int>(16 / sizeof(U));
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 16 == 0 && (static_cast<uint64_t>(stride) * sizeof(U)) % 16 == 0;
  if (aligned && cols % V == 0) {
    const int per_row = cols / V;
    for (int c = thread_index(); c < rows * per_row; c += kThreads) {
      const int r = c / per_row, chunk = c % per_row;
      *reinterpret_cast<uint4*>(dst + r * stride + chunk * V) =
          *reinterpret_cast<const uint4*>(staged_rows + r * Staging<U>::kRowBytes + chunk * 16);
    }
    return;
  }
  for (int e = thread_index(); e < rows * cols; e += kThreads) {
    const int r = e / cols, c = e % cols;
    dst[r * stride + c] = *reinterpret_cast<const U*>(staged_rows + r * Staging<U>::kRowBytes + c * sizeof(U));
  }
}

}  // namespace detail

template <class U>
IRIS_DEVICE void store(const Accumulator& acc, const ccl::View<U>& dst, const ccl::Tile& tile) {
  using namespace detail;
  require_block_shape();
  uint8_t* smem = arena();
  for (int first = 0; first < tile.rows; first += Staging<U>::kRows) {
    const int rows = tile.rows - first < Staging<U>::kRows ? tile.rows - first : Staging<U>::kRows;
    __syncthreads();  // the arena is free: the k loop, or the previous pass, is done with it
#pragma unroll
    for (int e = 0; e < Accumulator::kElements; ++e) {
      int i, j;
      position(acc, e, i, j);
      if (i >= first && i < first + rows && j < tile.cols) {
        // int offsets: a size_t product would make the index arithmetic 64-bit (registers, under NVRTC)
        *reinterpret_cast<U*>(smem + ((i - first) * Staging<U>::kRowBytes + j * static_cast<int>(sizeof(U)))) = U(acc.v[e]);
      }
    }
    __syncthreads();
    write_rows(smem, dst.ptr + (tile.row + first) * dst.stride + tile.col, dst.stride, rows, tile.cols);
  }
  __syncthreads();  // the whole tile is written when any thread returns (a collective may read it next)
}

template <class U>
IRIS_DEVICE void put(const Accumulator& acc, const Context& ctx, const ccl::View<U>& dst, const ccl::Tile& tile,
                     int to_rank) {
  ccl::View<U> there = dst;
  there.ptr = ctx.translate(dst.ptr, to_rank);
  store(acc, there, tile);
}

template <class U>
IRIS_DEVICE void atomic_add(const Accumulator& acc, const ccl::View<U>& dst, const ccl::Tile& tile) {
#pragma unroll
  for (int e = 0; e < Accumulator::kElements; ++e) {
    int i, j;
    detail::position(acc, e, i, j);
    if (i < tile.rows && j < tile.cols) {
      U* p = dst.ptr + (tile.row + i) * dst.stride + tile.col + j;
      ::iris::detail::add(p, U(acc.v[e]), relaxed, sys);
    }
  }
}

IRIS_DEVICE int64_t tiles(int64_t m, int64_t n) {
  return ((m + kTileM - 1) / kTileM) * ((n + kTileN - 1) / kTileN);
}

IRIS_DEVICE ccl::Tile tile(int64_t index, int64_t m, int64_t n, int group_m) {
  const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;
  const int64_t in_group = static_cast<int64_t>(group_m) * tiles_n;
  const int64_t first_m = (index / in_group) * group_m;
  const int64_t group_rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
  const int64_t tm = first_m + (index % in_group) % group_rows;
  const int64_t tn = (index % in_group) / group_rows;
  ccl::Tile t = ccl::tile(tm * tiles_n + tn, m, n, kTileM, kTileN);
  return t;
}

IRIS_DEVICE Staging staging() { return Staging{detail::arena(), static_cast<unsigned int>(kSharedBytes)}; }

}  // namespace gemm
}  // namespace iris

#endif  // IRIS_IMPL_GEMM_TILE_HPP
