// iris::Context's methods: the free functions with the current rank and heap bases filled in.
#ifndef IRIS_IMPL_CONTEXT_HPP
#define IRIS_IMPL_CONTEXT_HPP

namespace iris {

static_assert(sizeof(Context) == sizeof(abi::ContextData) && alignof(Context) == alignof(abi::ContextData),
              "iris::Context must add no fields to abi::ContextData: Lua passes it by value");

template <class T>
IRIS_DEVICE T* Context::translate(T* p, int to_rank) const {
  return ::iris::translate(p, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE T Context::load(const T* p, int from_rank) const {
  return ::iris::load(p, rank, from_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::store(T* p, value_of<T> v, int to_rank) const {
  ::iris::store(p, v, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::get(const T* from_p, T* to_p, int from_rank) const {
  ::iris::get(from_p, to_p, rank, from_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::put(const T* from_p, T* to_p, int to_rank) const {
  ::iris::put(from_p, to_p, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::copy(const T* src, T* dst, int from_rank, int to_rank) const {
  ::iris::copy(src, dst, from_rank, to_rank, rank, heap_bases);
}

#define IRIS_CONTEXT_ATOMIC(name)                                                        \
  template <class T>                                                                     \
  IRIS_DEVICE T Context::name(T* p, value_of<T> v, int to_rank, Semantic sem, Scope scope) const { \
    return ::iris::name(p, v, rank, to_rank, heap_bases, sem, scope);                    \
  }
IRIS_CONTEXT_ATOMIC(atomic_add)
IRIS_CONTEXT_ATOMIC(atomic_sub)
IRIS_CONTEXT_ATOMIC(atomic_xchg)
IRIS_CONTEXT_ATOMIC(atomic_xor)
IRIS_CONTEXT_ATOMIC(atomic_and)
IRIS_CONTEXT_ATOMIC(atomic_or)
IRIS_CONTEXT_ATOMIC(atomic_min)
IRIS_CONTEXT_ATOMIC(atomic_max)
#undef IRIS_CONTEXT_ATOMIC

template <class T>
IRIS_DEVICE T Context::atomic_cas(T* p, value_of<T> cmp, value_of<T> v, int to_rank, Semantic sem, Scope scope) const {
  return ::iris::atomic_cas(p, cmp, v, rank, to_rank, heap_bases, sem, scope);
}

template <class T>
IRIS_DEVICE void Context::signal_set(T* p, value_of<T> v, int to_rank) const {
  ::iris::signal_set(p, v, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE T Context::signal_add(T* p, value_of<T> v, int to_rank) const {
  return ::iris::signal_add(p, v, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE T Context::wait_until(const T* p, Cmp cmp, value_of<T> value, Semantic sem, Scope scope, const char* file,
                                  int line) const {
  return ::iris::wait_until(p, cmp, value, sem, scope, file, line);
}

template <class T>
IRIS_DEVICE void Context::put_block(const T* src, T* dst, size_t count, int to_rank) const {
  ::iris::put_block(src, dst, count, rank, to_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::get_block(const T* src, T* dst, size_t count, int from_rank) const {
  ::iris::get_block(src, dst, count, rank, from_rank, heap_bases);
}
template <class T>
IRIS_DEVICE void Context::copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank) const {
  ::iris::copy_block(src, dst, count, from_rank, to_rank, rank, heap_bases);
}

template <class T>
IRIS_DEVICE void Context::put_block(const T* src, T* dst, size_t count, int to_rank, const Staging& staging) const {
  ::iris::put_block(src, dst, count, rank, to_rank, heap_bases, staging);
}
template <class T>
IRIS_DEVICE void Context::get_block(const T* src, T* dst, size_t count, int from_rank, const Staging& staging) const {
  ::iris::get_block(src, dst, count, rank, from_rank, heap_bases, staging);
}
template <class T>
IRIS_DEVICE void Context::copy_block(const T* src, T* dst, size_t count, int from_rank, int to_rank,
                                     const Staging& staging) const {
  ::iris::copy_block(src, dst, count, from_rank, to_rank, rank, heap_bases, staging);
}

}  // namespace iris

#endif  // IRIS_IMPL_CONTEXT_HPP
