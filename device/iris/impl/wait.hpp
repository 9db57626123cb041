// Signals and bounded waits (iris.hpp documents them; the bounded spin and its report: report.hpp).
#ifndef IRIS_IMPL_WAIT_HPP
#define IRIS_IMPL_WAIT_HPP

namespace iris {

template <class T>
IRIS_DEVICE T wait_until(const T* p, Cmp cmp, value_of<T> value, Semantic sem, Scope scope, const char* file, int line) {
  static_assert(detail::atomic_int<T>::value, "iris::wait_until waits on " IRIS_ATOMIC_TYPES_INT " flags");
  return detail::wait_for(p, cmp, value, sem, scope, "wait_until", file, line);
}

template <class T>
IRIS_DEVICE void signal_set(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb) {
  static_assert(detail::atomic_int<T>::value, "iris::signal_set writes " IRIS_ATOMIC_TYPES_INT " flags");
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) {
    detail::remote_atomic(IRIS_PROXY_XCHG, q, v);
    return;
  }
  detail::atomic_store(q, v, release, sys);
}

template <class T>
IRIS_DEVICE T signal_add(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb) {
  static_assert(detail::atomic_int<T>::value, "iris::signal_add adds to " IRIS_ATOMIC_TYPES_INT " flags");
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_ADD, q, v);
  return detail::add(q, v, release, sys);
}

}  // namespace iris

#endif  // IRIS_IMPL_WAIT_HPP
