// Block-cooperative bulk copies (iris.hpp documents them). The shape that reaches link bandwidth:
// 16-byte accesses, consecutive threads on consecutive 16-byte chunks, and several loads in flight per
// thread before the stores (remote loads over NVLink/xGMI have long latency).
#ifndef IRIS_IMPL_BLOCK_COPY_HPP
#define IRIS_IMPL_BLOCK_COPY_HPP

namespace iris {
namespace detail {

IRIS_DEVICE unsigned int block_thread_index() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
IRIS_DEVICE unsigned int block_thread_count() { return blockDim.x * blockDim.y * blockDim.z; }

// n 16-byte chunks, 4 in flight per thread.
IRIS_DEVICE void copy_chunks16(const uint4* src, uint4* dst, size_t n, size_t t, size_t stride) {
  size_t i = t;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    const uint4 c = src[i + 2 * stride];
    const uint4 d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

template <class T>
IRIS_DEVICE void block_copy(const T* src, T* dst, size_t count) {
  const size_t t = block_thread_index();
  const size_t stride = block_thread_count();
#if defined(IRIS_PLATFORM_CPU)
  // A block's threads run one after another here: interleaved 16-byte chunks would make every thread
  // sweep the whole range. Each copies a contiguous slice instead.
  const size_t per_thread = (count + stride - 1) / stride;
  const size_t begin = t * per_thread < count ? t * per_thread : count;
  const size_t end = begin + per_thread < count ? begin + per_thread : count;
  if (end > begin) memcpy(static_cast<void*>(dst + begin), static_cast<const void*>(src + begin), (end - begin) * sizeof(T));
  return;
#endif
  const uintptr_t s = reinterpret_cast<uintptr_t>(src);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst);
  size_t done = 0;
  // Vectorizable when both pointers share their offset within 16 bytes and elements tile 16 bytes.
  if (16 % sizeof(T) == 0 && ((s ^ d) & 15u) == 0 && s % sizeof(T) == 0) {
    size_t head = ((16u - (s & 15u)) & 15u) / sizeof(T);
    if (head > count) head = count;
    for (size_t i = t; i < head; i += stride) dst[i] = src[i];
    const size_t chunks = (count - head) * sizeof(T) / 16;
    copy_chunks16(reinterpret_cast<const uint4*>(src + head), reinterpret_cast<uint4*>(dst + head), chunks, t, stride);
    done = head + chunks * (16 / sizeof(T));
  }
  for (size_t i = done + t; i < count; i += stride) dst[i] = src[i];
}

}  // namespace detail

template <class T>
IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb) {
  detail::block_copy(src, translate(dst, from_rank, to_rank, hb), count);
}

template <class T>
IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb) {
  detail::block_copy(translate(src, from_rank, to_rank, hb), dst, count);
}

template <class T>
IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, int cur_rank,
                            const uint64_t* hb) {
  detail::block_copy(translate(src, cur_rank, from_rank, hb), translate(dst, cur_rank, to_rank, hb), count);
}

}  // namespace iris

#endif  // IRIS_IMPL_BLOCK_COPY_HPP
