// Pointer translation and the plain remote accesses (iris.hpp documents them).
#ifndef IRIS_IMPL_RMA_HPP
#define IRIS_IMPL_RMA_HPP

namespace iris {

template <class T>
IRIS_DEVICE T* translate(T* p, int from_rank, int to_rank, const uint64_t* hb) {
  if (from_rank == to_rank) return p;  // local: no heap-base loads
  const uintptr_t offset = reinterpret_cast<uintptr_t>(p) - static_cast<uintptr_t>(hb[from_rank]);
  return reinterpret_cast<T*>(static_cast<uintptr_t>(hb[to_rank]) + offset);
}

// Plain accesses go through detail::plain_load/plain_store (order.hpp): the memory itself, or the cpu
// backend's store buffers in its weak memory model, which hold back stores to another rank's heap.
template <class T>
IRIS_DEVICE T load(const T* p, int to_rank, int from_rank, const uint64_t* hb) {
  return detail::plain_load(translate(p, to_rank, from_rank, hb));
}

template <class T>
IRIS_DEVICE void store(T* p, T v, int from_rank, int to_rank, const uint64_t* hb) {
  detail::plain_store(translate(p, from_rank, to_rank, hb), v, from_rank != to_rank);
}

template <class T>
IRIS_DEVICE void get(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb) {
  detail::plain_store(to_p, detail::plain_load(translate(from_p, from_rank, to_rank, hb)), false);
}

template <class T>
IRIS_DEVICE void put(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb) {
  detail::plain_store(translate(to_p, from_rank, to_rank, hb), detail::plain_load(from_p), from_rank != to_rank);
}

template <class T>
IRIS_DEVICE void copy(const T* src, T* dst, int from_rank, int to_rank, int cur_rank, const uint64_t* hb) {
  detail::plain_store(translate(dst, cur_rank, to_rank, hb), detail::plain_load(translate(src, cur_rank, from_rank, hb)),
                      to_rank != cur_rank);
}

}  // namespace iris

#endif  // IRIS_IMPL_RMA_HPP
