// Views, tiles, teams, the reduction operators and TileFlags (ccl.hpp documents them).
#ifndef IRIS_IMPL_CCL_TYPES_HPP
#define IRIS_IMPL_CCL_TYPES_HPP

namespace iris {
namespace ccl {

template <class T>
IRIS_DEVICE int64_t View<T>::tiles(int block_m, int block_n) const {
  return ((rows + block_m - 1) / block_m) * ((cols + block_n - 1) / block_n);
}

IRIS_DEVICE Tile tile(int64_t index, int64_t rows, int64_t cols, int block_m, int block_n) {
  const int64_t tiles_n = (cols + block_n - 1) / block_n;
  Tile t;
  t.index = index;
  t.row = (index / tiles_n) * block_m;
  t.col = (index % tiles_n) * block_n;
  t.rows = static_cast<int>(rows - t.row < block_m ? rows - t.row : block_m);
  t.cols = static_cast<int>(cols - t.col < block_n ? cols - t.col : block_n);
  return t;
}

IRIS_DEVICE int Team::rank_of(int i) const {
  uint64_t rest = members;
  for (; i > 0; --i) rest &= rest - 1;  // drop the lowest i members
  return __ffsll(static_cast<long long>(rest)) - 1;
}

IRIS_DEVICE Team team(const Context& ctx, uint64_t members) {
  Team t;
  t.ctx = ctx;
  t.members = members;
  t.size = __popcll(members);
  t.index = __popcll(members & ((1ull << ctx.rank) - 1ull));
  return t;
}

IRIS_DEVICE Team team(const Context& ctx) {
  return team(ctx, ctx.world_size >= 64 ? ~0ull : (1ull << ctx.world_size) - 1ull);
}

// Flag value of `step` at `epoch`: steps are below 8, so every step of an epoch is above every step of
// the epochs before.
IRIS_DEVICE void TileFlags::publish(int step) const {
  ::iris::detail::atomic_store(flags + index, epoch * 8 + static_cast<uint64_t>(step), release, sys);
}

IRIS_DEVICE void TileFlags::wait(int rank, int step) const {
  ::iris::detail::wait_for(ctx.translate(flags + index, rank), Cmp::ge, epoch * 8 + static_cast<uint64_t>(step), acquire, sys,
                   "iris::ccl tile flag");
}

namespace detail {

using ::iris::detail::is_same;

// The type a reduction accumulates in: float for the 16-bit floats, the type itself otherwise.
template <class T> struct accumulator { typedef T type; };
template <> struct accumulator< ::iris::half> { typedef float type; };
template <> struct accumulator< ::iris::bfloat16> { typedef float type; };

template <class T> struct remove_const { typedef T type; };
template <class T> struct remove_const<const T> { typedef T type; };

template <class T> struct is_float_type {
  static constexpr bool value = is_same<T, float>::value || is_same<T, double>::value;
};

// The unsigned type of T's size, for wrapping integer arithmetic (no signed overflow).
template <class T> struct wrap_type { typedef typename ::iris::detail::uint_of_size<sizeof(T) < 4 ? 4 : sizeof(T)>::type type; };

template <class A>
IRIS_DEVICE A combine(A a, A b, Op op) {
  if constexpr (is_same<A, bool>::value) {
    switch (op) {
      case Op::prod: case Op::min: case Op::band: return a && b;
      case Op::bxor: return a != b;
      default: return a || b;
    }
  } else if constexpr (is_float_type<A>::value) {
    switch (op) {
      case Op::prod: return a * b;
      // b when it is smaller or NaN; a stays when a is NaN (the comparison fails): NaN wins either way.
      case Op::min: return (b < a || b != b) ? b : a;
      case Op::max: return (b > a || b != b) ? b : a;
      default: return a + b;
    }
  } else {
    typedef typename wrap_type<A>::type U;
    switch (op) {
      case Op::prod: return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
      case Op::min: return b < a ? b : a;
      case Op::max: return b > a ? b : a;
      case Op::band: return static_cast<A>(a & b);
      case Op::bor: return static_cast<A>(a | b);
      case Op::bxor: return static_cast<A>(a ^ b);
      default: return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
    }
  }
}

template <class A, class T>
IRIS_DEVICE A to_accumulator(T x) {
  if constexpr (is_same<A, bool>::value) {
    return x;
  } else {
    return static_cast<A>(x);
  }
}

template <class T, class A>
IRIS_DEVICE T from_accumulator(A x) {
  if constexpr (is_same<T, A>::value) {
    return x;
  } else {
    return static_cast<T>(x);
  }
}

// *p = combine(*p, v) atomically in whatever heap p points into (release/acquire, system scope). Native
// where the platform has the operation; otherwise compare-and-swap on the value, or on the aligned
// 4-byte word holding a 1- or 2-byte value.
template <class T>
IRIS_DEVICE void atomic_combine(T* p, T v, Op op) {
  using namespace ::iris::detail;
  if constexpr (atomic_int<T>::value) {
    typedef typename canonical_int<T>::type C;
    C* q = reinterpret_cast<C*>(p);
    typedef typename uint_of_size<sizeof(T)>::type U;
    switch (op) {
      case Op::sum: add(q, static_cast<C>(v), acq_rel, sys); return;
      case Op::min: min_max<C, false>(q, static_cast<C>(v), acq_rel, sys); return;
      case Op::max: min_max<C, true>(q, static_cast<C>(v), acq_rel, sys); return;
      case Op::band: fetch_and(reinterpret_cast<U*>(p), static_cast<U>(v), acq_rel, sys); return;
      case Op::bor: fetch_or(reinterpret_cast<U*>(p), static_cast<U>(v), acq_rel, sys); return;
      case Op::bxor: fetch_xor(reinterpret_cast<U*>(p), static_cast<U>(v), acq_rel, sys); return;
      default: break;
    }
  } else if constexpr (is_float32_64<T>::value) {
    if (op == Op::sum) {
      add(p, v, acq_rel, sys);
      return;
    }
  } else if constexpr (is_float16<T>::value) {
    if (op == Op::sum) {
      add16(p, v, acq_rel, sys);
      return;
    }
  }
  typedef typename accumulator<T>::type A;
  const A operand = to_accumulator<A>(v);
  auto apply = [operand, op](T x) { return from_accumulator<T>(combine(to_accumulator<A>(x), operand, op)); };
  if constexpr (sizeof(T) >= 4) {
    cas_loop(p, apply, acq_rel, sys);
  } else if constexpr (sizeof(T) == 2) {
    cas_loop16(p, apply, acq_rel, sys);
  } else {
    // A byte: through the aligned word holding it; the other three bytes are written back unchanged.
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(address & ~static_cast<uintptr_t>(3));
    const unsigned int shift = static_cast<unsigned int>(address & 3) * 8;
    unsigned int old = atomic_load(word, relaxed, sys);
    for (;;) {
      const T current = bit_cast<T>(static_cast<unsigned char>((old >> shift) & 0xffu));
      const unsigned int next = bit_cast<unsigned char>(apply(current));
      const unsigned int desired = (old & ~(0xffu << shift)) | (next << shift);
      const unsigned int seen = cas(word, old, desired, acq_rel, sys);
      if (seen == old) return;
      old = seen;
    }
  }
}

}  // namespace detail
}  // namespace ccl
}  // namespace iris

#endif  // IRIS_IMPL_CCL_TYPES_HPP
