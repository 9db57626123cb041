// Block-cooperative bulk copies (iris.hpp documents them). The shape that reaches link bandwidth:
// 16-byte accesses, consecutive threads on consecutive 16-byte chunks, and several loads in flight per
// thread before the stores (remote loads over NVLink/xGMI have long latency).
#ifndef IRIS_IMPL_BLOCK_COPY_HPP
#define IRIS_IMPL_BLOCK_COPY_HPP

namespace iris {
namespace detail {

// How many 16-byte loads each thread has in flight before its stores. Remote loads over NVLink/xGMI
// take microseconds; more in flight hides more of that, at the cost of registers. Tunable per
// compile (iris.compile(src, {defines = {IRIS_BLOCK_COPY_UNROLL = 8}})); docs/perf.md has the sweep.
#ifndef IRIS_BLOCK_COPY_UNROLL
#define IRIS_BLOCK_COPY_UNROLL 4
#endif

// n 16-byte chunks, chunk i read at from(i) and written at to(i): this thread takes chunks t, t + stride,
// ..., InFlight loads at a time before their stores.
template <int InFlight, class From, class To>
IRIS_DEVICE void copy_chunks16_at(int64_t n, int64_t t, int64_t stride, const From& from, const To& to) {
  int64_t i = t;
  for (; i + (InFlight - 1) * stride < n; i += InFlight * stride) {
    uint4 v[InFlight];
#pragma unroll
    for (int k = 0; k < InFlight; ++k) v[k] = *from(i + k * stride);
#pragma unroll
    for (int k = 0; k < InFlight; ++k) *to(i + k * stride) = v[k];
  }
  for (; i < n; i += stride) *to(i) = *from(i);
}

// n contiguous 16-byte chunks, IRIS_BLOCK_COPY_UNROLL in flight per thread.
IRIS_DEVICE void copy_chunks16(const uint4* src, uint4* dst, size_t n, size_t t, size_t stride) {
  copy_chunks16_at<IRIS_BLOCK_COPY_UNROLL>(static_cast<int64_t>(n), static_cast<int64_t>(t), static_cast<int64_t>(stride),
                                           [src](int64_t i) { return src + i; }, [dst](int64_t i) { return dst + i; });
}

// How a copy of `count` elements splits where src and dst share their offset within 16 bytes (and
// elements tile 16 bytes): `head` elements up to the first 16-byte boundary, then `chunks` whole 16-byte
// chunks, then the rest. `vector` is false where they do not: the copy goes element by element.
struct Split16 {
  bool vector;
  size_t head, chunks;
};
template <class T>
IRIS_DEVICE Split16 split16(const T* src, const T* dst, size_t count) {
  const uintptr_t s = reinterpret_cast<uintptr_t>(src);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst);
  Split16 split{16 % sizeof(T) == 0 && ((s ^ d) & 15u) == 0 && s % sizeof(T) == 0, 0, 0};
  if (split.vector) {
    split.head = ((16u - (s & 15u)) & 15u) / sizeof(T);
    if (split.head > count) split.head = count;
    split.chunks = (count - split.head) * sizeof(T) / 16;
  }
  return split;
}

// `to_another_rank`: dst is in another rank's heap (the cpu backend's weak memory model holds back
// such stores).
template <class T>
IRIS_DEVICE void block_copy(const T* src, T* dst, size_t count, bool to_another_rank) {
  const size_t t = block_thread_index();
  const size_t stride = block_thread_count();
#if defined(IRIS_PLATFORM_CPU)
  // A block's threads run one after another here: interleaved 16-byte chunks would make every thread
  // sweep the whole range. Each copies a contiguous slice instead.
  const size_t per_thread = (count + stride - 1) / stride;
  const size_t begin = t * per_thread < count ? t * per_thread : count;
  const size_t end = begin + per_thread < count ? begin + per_thread : count;
  if (end > begin) copy_bytes(dst + begin, src + begin, (end - begin) * sizeof(T), to_another_rank);
  return;
#else
  (void)to_another_rank;
#endif
  size_t done = 0;
  const Split16 split = split16(src, dst, count);
  if (split.vector) {
    for (size_t i = t; i < split.head; i += stride) dst[i] = src[i];
    copy_chunks16(reinterpret_cast<const uint4*>(src + split.head), reinterpret_cast<uint4*>(dst + split.head),
                  split.chunks, t, stride);
    done = split.head + split.chunks * (16 / sizeof(T));
  }
  for (size_t i = done + t; i < count; i += stride) dst[i] = src[i];
}

}  // namespace detail

namespace detail {
// A block copy where either side may be on another node (remote.hpp): that side's rank is reached
// through the host proxy, each thread posting its slice (both sides: the proxy copies between them
// through its host memory); otherwise `local_copy` copies.
template <class T, class LocalCopy>
IRIS_DEVICE void block_copy_any(const T* src, T* dst, size_t count, LocalCopy local_copy) {
  const bool from_remote = is_remote(src), to_remote = is_remote(dst);
  if (!from_remote && !to_remote) return local_copy();
  if (from_remote && to_remote) return remote_copy_block(dst, src, count * sizeof(T));
  if (to_remote) return remote_block(IRIS_PROXY_PUT, dst, src, count * sizeof(T));
  remote_block(IRIS_PROXY_GET, src, dst, count * sizeof(T));
}
}  // namespace detail

template <class T>
IRIS_DEVICE void put_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb) {
  T* to = translate(dst, from_rank, to_rank, hb);
  detail::block_copy_any(src, to, count, [&] { detail::block_copy(src, to, count, from_rank != to_rank); });
}

template <class T>
IRIS_DEVICE void get_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, const uint64_t* hb) {
  const T* from = translate(src, from_rank, to_rank, hb);
  detail::block_copy_any(from, dst, count, [&] { detail::block_copy(from, dst, count, false); });
}

template <class T>
IRIS_DEVICE void copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank, int cur_rank,
                            const uint64_t* hb) {
  const T* from = translate(src, cur_rank, from_rank, hb);
  T* to = translate(dst, cur_rank, to_rank, hb);
  detail::block_copy_any(from, to, count, [&] { detail::block_copy(from, to, count, to_rank != cur_rank); });
}

}  // namespace iris

#endif  // IRIS_IMPL_BLOCK_COPY_HPP
