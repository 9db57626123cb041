// Atomics on any rank's heap (iris.hpp documents them): type checks, then the platform primitive or a
// compare-exchange loop where the platform has none (order.hpp).
#ifndef IRIS_IMPL_ATOMICS_HPP
#define IRIS_IMPL_ATOMICS_HPP

namespace iris {
namespace detail {

template <int Bytes, bool Signed> struct int_of;
template <> struct int_of<4, true> { typedef int type; };
template <> struct int_of<4, false> { typedef unsigned int type; };
template <> struct int_of<8, true> { typedef long long type; };
template <> struct int_of<8, false> { typedef unsigned long long type; };

// The primitive's integer type for T (long and long long are the same width, different types).
template <class T> struct canonical_int { typedef typename int_of<sizeof(T), atomic_int<T>::is_signed>::type type; };

#define IRIS_ATOMIC_TYPES_ARITH "int32_t, uint32_t, int64_t, uint64_t, float or double"
#define IRIS_ATOMIC_TYPES_INT "int32_t, uint32_t, int64_t or uint64_t"

template <class T>
IRIS_DEVICE T add16(T* p, T v, Semantic sem, Scope scope) {
#if defined(IRIS_NATIVE_HALF_ADD)
  if constexpr (is_same<T, ::iris::half>::value) {
    return bit_cast<T>(fetch_add_half_bits(reinterpret_cast<unsigned short*>(p), bit_cast<unsigned short>(v), sem, scope));
  }
#endif
#if defined(IRIS_NATIVE_BFLOAT16_ADD)
  if constexpr (is_same<T, ::iris::bfloat16>::value) {
    return bit_cast<T>(
        fetch_add_bfloat16_bits(reinterpret_cast<unsigned short*>(p), bit_cast<unsigned short>(v), sem, scope));
  }
#endif
  const float addend = static_cast<float>(v);
  return cas_loop16(p, [addend](T x) { return static_cast<float>(x) + addend; }, sem, scope);
}

template <class T>
IRIS_DEVICE T add(T* p, T v, Semantic sem, Scope scope) {
  if constexpr (atomic_int<T>::value) {
    typedef typename canonical_int<T>::type C;
    return static_cast<T>(fetch_add(reinterpret_cast<C*>(p), static_cast<C>(v), sem, scope));
  } else if constexpr (is_float32_64<T>::value) {
#if defined(IRIS_NATIVE_FLOAT_ADD)
    return fetch_add(p, v, sem, scope);
#else
    return cas_loop(p, [v](T x) { return x + v; }, sem, scope);
#endif
  } else {
    return add16(p, v, sem, scope);
  }
}

// -v for an integer, wrapping as unsigned subtraction does (so INT_MIN and unsigned values work).
template <class T>
IRIS_DEVICE T negate_int(T v) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  return static_cast<T>(static_cast<U>(0) - static_cast<U>(v));
}

template <class T, bool Max>
IRIS_DEVICE T min_max(T* p, T v, Semantic sem, Scope scope) {
#if defined(IRIS_NATIVE_INT_MINMAX)
  if constexpr (atomic_int<T>::value) {
    typedef typename canonical_int<T>::type C;
    C* q = reinterpret_cast<C*>(p);
    return static_cast<T>(Max ? fetch_max(q, static_cast<C>(v), sem, scope) : fetch_min(q, static_cast<C>(v), sem, scope));
  }
#endif
  return cas_loop(p, [v](T x) { return (Max ? x < v : v < x) ? v : x; }, sem, scope);
}

template <class T, class Op>
IRIS_DEVICE T bitwise(T* p, T v, Op op) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  return static_cast<T>(op(reinterpret_cast<U*>(p), static_cast<U>(v)));
}

template <class T>
IRIS_DEVICE T exchange_any(T* p, T v, Semantic sem, Scope scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  return bit_cast<T>(exchange(reinterpret_cast<U*>(p), bit_cast<U>(v), sem, scope));
}

template <class T>
IRIS_DEVICE T cas_any(T* p, T cmp, T v, Semantic sem, Scope scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  return bit_cast<T>(cas(reinterpret_cast<U*>(p), bit_cast<U>(cmp), bit_cast<U>(v), sem, scope));
}

}  // namespace detail

template <class T>
IRIS_DEVICE T atomic_add(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value || detail::is_float16<T>::value,
                "iris::atomic_add takes " IRIS_ATOMIC_TYPES_ARITH ", iris::half or iris::bfloat16");
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_ADD, q, v);
  return detail::add(q, v, sem, scope);
}

template <class T>
IRIS_DEVICE T atomic_sub(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value || detail::is_float16<T>::value,
                "iris::atomic_sub takes " IRIS_ATOMIC_TYPES_ARITH ", iris::half or iris::bfloat16");
  T* q = translate(p, from_rank, to_rank, hb);
  if constexpr (detail::atomic_int<T>::value) {
    if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_ADD, q, detail::negate_int(v));
    return detail::add(q, detail::negate_int(v), sem, scope);
  } else if constexpr (detail::is_float32_64<T>::value) {
    if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_ADD, q, static_cast<T>(-v));
    return detail::add(q, static_cast<T>(-v), sem, scope);
  } else {
    if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_ADD, q, static_cast<T>(-static_cast<float>(v)));
    return detail::add(q, static_cast<T>(-static_cast<float>(v)), sem, scope);
  }
}

template <class T>
IRIS_DEVICE T atomic_xchg(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value,
                "iris::atomic_xchg takes " IRIS_ATOMIC_TYPES_ARITH);
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_XCHG, q, v);
  return detail::exchange_any(q, v, sem, scope);
}

template <class T>
IRIS_DEVICE T atomic_cas(T* p, value_of<T> cmp, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem,
                         Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value,
                "iris::atomic_cas takes " IRIS_ATOMIC_TYPES_ARITH);
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_CAS, q, v, cmp);
  return detail::cas_any(q, cmp, v, sem, scope);
}

template <class T>
IRIS_DEVICE T atomic_min(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value,
                "iris::atomic_min takes " IRIS_ATOMIC_TYPES_ARITH);
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_MIN, q, v);
  return detail::min_max<T, false>(q, v, sem, scope);
}

template <class T>
IRIS_DEVICE T atomic_max(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) {
  static_assert(detail::atomic_int<T>::value || detail::is_float32_64<T>::value,
                "iris::atomic_max takes " IRIS_ATOMIC_TYPES_ARITH);
  T* q = translate(p, from_rank, to_rank, hb);
  if (detail::is_remote(q)) return detail::remote_atomic(IRIS_PROXY_MAX, q, v);
  return detail::min_max<T, true>(q, v, sem, scope);
}

#define IRIS_DEFINE_BITWISE_ATOMIC(name, primitive, proxy_op)                                               \
  template <class T>                                                                                        \
  IRIS_DEVICE T name(T* p, value_of<T> v, int from_rank, int to_rank, const uint64_t* hb, Semantic sem, Scope scope) { \
    static_assert(detail::atomic_int<T>::value, "iris::" #name " takes " IRIS_ATOMIC_TYPES_INT);             \
    typedef typename detail::uint_of_size<sizeof(T)>::type U;                                               \
    T* target = translate(p, from_rank, to_rank, hb);                                                       \
    if (detail::is_remote(target)) return detail::remote_atomic(proxy_op, target, v);                       \
    return detail::bitwise(target, v, [sem, scope](U* q, U x) { return detail::primitive(q, x, sem, scope); }); \
  }
IRIS_DEFINE_BITWISE_ATOMIC(atomic_and, fetch_and, IRIS_PROXY_AND)
IRIS_DEFINE_BITWISE_ATOMIC(atomic_or, fetch_or, IRIS_PROXY_OR)
IRIS_DEFINE_BITWISE_ATOMIC(atomic_xor, fetch_xor, IRIS_PROXY_XOR)
#undef IRIS_DEFINE_BITWISE_ATOMIC

}  // namespace iris

#endif  // IRIS_IMPL_ATOMICS_HPP
