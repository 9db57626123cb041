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
// backend's store buffers in its weak memory model, which hold back stores to another rank's heap. An
// address of a rank on another node (detail::is_remote) goes through the host proxy (remote.hpp).
namespace detail {
template <class T>
IRIS_DEVICE T load_any(const T* q) {
  if (is_remote(q)) return remote_load(q);
  return plain_load(q);
}
template <class T>
IRIS_DEVICE void store_any(T* q, const T& v, bool to_another_rank) {
  if (is_remote(q)) return remote_store(q, v);
  plain_store(q, v, to_another_rank);
}
}  // namespace detail

template <class T>
IRIS_DEVICE T load(const T* p, int to_rank, int from_rank, const uint64_t* hb) {
  return detail::load_any(translate(p, to_rank, from_rank, hb));
}

template <class T>
IRIS_DEVICE void store(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb) {
  detail::store_any(translate(p, from_rank, to_rank, hb), v, from_rank != to_rank);
}

template <class T>
IRIS_DEVICE void get(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb) {
  detail::plain_store(to_p, detail::load_any(translate(from_p, from_rank, to_rank, hb)), false);
}

template <class T>
IRIS_DEVICE void put(const T* from_p, T* to_p, int from_rank, int to_rank, const uint64_t* hb) {
  detail::store_any(translate(to_p, from_rank, to_rank, hb), detail::plain_load(from_p), from_rank != to_rank);
}

template <class T>
IRIS_DEVICE void copy(const T* src, T* dst, int from_rank, int to_rank, int cur_rank, const uint64_t* hb) {
  detail::store_any(translate(dst, cur_rank, to_rank, hb), detail::load_any(translate(src, cur_rank, from_rank, hb)),
                    to_rank != cur_rank);
}

}  // namespace iris

#endif  // IRIS_IMPL_RMA_HPP
