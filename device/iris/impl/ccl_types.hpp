// Views, tiles, teams, TileFlags, and how elements are combined (ccl.hpp documents them).
#ifndef IRIS_IMPL_CCL_TYPES_HPP
#define IRIS_IMPL_CCL_TYPES_HPP

namespace iris {
namespace ccl {

// Op's values are impl/abi.h's IRIS_REDUCTION_CODES, which ctx.ccl passes: one Op for each.
#define IRIS_CCL_OP_MATCHES(name, code, domain) \
  static_assert(static_cast<int>(Op::name) == code, "iris::ccl::Op and IRIS_REDUCTION_CODES disagree");
IRIS_REDUCTION_CODES(IRIS_CCL_OP_MATCHES)
#undef IRIS_CCL_OP_MATCHES

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
  ::iris::detail::wait_for(ctx.translate(flags + index, rank), Cmp::ge, epoch * 8 + static_cast<uint64_t>(step), acquire,
                           sys, "iris::ccl tile flag");
}

namespace detail {

using ::iris::detail::is_same;

template <class T> struct remove_const { typedef T type; };
template <class T> struct remove_const<const T> { typedef T type; };

// ---- storage types ---------------------------------------------------------------------------------
// The code that moves and combines elements is compiled once per storage type: integers of one size
// share it whatever their signedness (and bool is a byte), floats have their own. Each collective is
// instantiated for every dtype, so this is most of what the run-time compilers spend their time on.
template <int Bytes> struct unsigned_of;
template <> struct unsigned_of<1> { typedef uint8_t type; };
template <> struct unsigned_of<2> { typedef uint16_t type; };
template <> struct unsigned_of<4> { typedef uint32_t type; };
template <> struct unsigned_of<8> { typedef uint64_t type; };

template <class T> struct integer_info { static constexpr bool integer = false, is_signed = false; };
#define IRIS_CCL_INTEGER(T, S)                     \
  template <> struct integer_info<T> {             \
    static constexpr bool integer = true;          \
    static constexpr bool is_signed = S;           \
  };
IRIS_CCL_INTEGER(bool, false)
IRIS_CCL_INTEGER(char, (static_cast<char>(-1) < 0))
IRIS_CCL_INTEGER(signed char, true)
IRIS_CCL_INTEGER(unsigned char, false)
IRIS_CCL_INTEGER(short, true)
IRIS_CCL_INTEGER(unsigned short, false)
IRIS_CCL_INTEGER(int, true)
IRIS_CCL_INTEGER(unsigned int, false)
IRIS_CCL_INTEGER(long, true)
IRIS_CCL_INTEGER(unsigned long, false)
IRIS_CCL_INTEGER(long long, true)
IRIS_CCL_INTEGER(unsigned long long, false)
#undef IRIS_CCL_INTEGER

template <class T, bool Integer = integer_info<T>::integer> struct storage { typedef T type; };
template <class T> struct storage<T, true> { typedef typename unsigned_of<sizeof(T)>::type type; };

template <class T> struct is_float_type {
  static constexpr bool value = is_same<T, float>::value || is_same<T, double>::value;
};

// The type a reduction accumulates in: float for the 16-bit floats, the storage type otherwise.
template <class S> struct accumulator { typedef S type; };
template <> struct accumulator< ::iris::half> { typedef float type; };
template <> struct accumulator< ::iris::bfloat16> { typedef float type; };

// ---- reductions ------------------------------------------------------------------------------------
// Every Op is one of five base operations on transformed values: max is min of the order reversed
// (integers: x ^ ~0, floats: -x), bor is band of the complements, signed integers compare as unsigned
// ones with the sign bit flipped. The transform is applied to each value read and undone on each
// value written, so the combining code has few cases. bool (0 or 1): sum and max are or, prod and min
// are and.
enum class Base : int { sum, prod, min, band, bxor };

struct Reduction {
  Base base;
  uint64_t mask;  // integers: x ^ mask both ways
  bool negate;    // floats: -x both ways
};

template <class T>
IRIS_DEVICE Reduction reduction(Op op) {
  typedef typename remove_const<T>::type E;
  Reduction r{Base::sum, 0, false};
  if constexpr (integer_info<E>::integer) {
    const uint64_t ones = sizeof(E) == 8 ? ~0ull : (1ull << (8 * sizeof(E))) - 1ull;
    const uint64_t sign = integer_info<E>::is_signed ? 1ull << (8 * sizeof(E) - 1) : 0ull;
    if (is_same<E, bool>::value) {
      if (op == Op::sum || op == Op::max) op = Op::bor;
      if (op == Op::prod || op == Op::min) op = Op::band;
    }
    switch (op) {
      case Op::prod: r.base = Base::prod; break;
      case Op::min: r.base = Base::min; r.mask = sign; break;
      case Op::max: r.base = Base::min; r.mask = ones ^ sign; break;
      case Op::band: r.base = Base::band; break;
      case Op::bor: r.base = Base::band; r.mask = ones; break;
      case Op::bxor: r.base = Base::bxor; break;
      default: break;
    }
  } else {
    switch (op) {
      case Op::prod: r.base = Base::prod; break;
      case Op::min: r.base = Base::min; break;
      case Op::max: r.base = Base::min; r.negate = true; break;
      default: break;
    }
  }
  return r;
}

template <class A>
IRIS_DEVICE A transform(A x, const Reduction& r) {
  if constexpr (is_float_type<A>::value) {
    return r.negate ? -x : x;
  } else {
    return static_cast<A>(x ^ static_cast<A>(r.mask));
  }
}

// a (op) b on transformed values. Integers are unsigned here, so sums and products wrap.
template <class A>
IRIS_DEVICE A combine(A a, A b, Base base) {
  if constexpr (is_float_type<A>::value) {
    switch (base) {
      case Base::prod: return a * b;
      // b when it is smaller or NaN; a stays when a is NaN (the comparison fails): NaN wins either way.
      case Base::min: return (b < a || b != b) ? b : a;
      default: return a + b;
    }
  } else {
    switch (base) {
      case Base::prod: return static_cast<A>(a * b);
      case Base::min: return b < a ? b : a;
      case Base::band: return static_cast<A>(a & b);
      case Base::bxor: return static_cast<A>(a ^ b);
      default: return static_cast<A>(a + b);
    }
  }
}

// a[j] = a[j] (op) b[j] for the V values of a unit: the choice of operation is made once per unit,
// not once per element (less code for the compilers, fewer branches on the device).
template <class A, int V>
IRIS_DEVICE void combine_unit(A (&a)[V], const A (&b)[V], Base base) {
  switch (base) {
    case Base::prod:
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = combine(a[j], b[j], Base::prod);
      break;
    case Base::min:
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = combine(a[j], b[j], Base::min);
      break;
    case Base::band:
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = combine(a[j], b[j], Base::band);
      break;
    case Base::bxor:
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = combine(a[j], b[j], Base::bxor);
      break;
    default:
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = combine(a[j], b[j], Base::sum);
      break;
  }
}

template <class A, class S>
IRIS_DEVICE A to_accumulator(S x) {
  if constexpr (is_same<A, S>::value) {
    return x;
  } else {
    return static_cast<A>(x);
  }
}

template <class S, class A>
IRIS_DEVICE S from_accumulator(A x) {
  if constexpr (is_same<S, A>::value) {
    return x;
  } else {
    return static_cast<S>(x);
  }
}

// *p = (*p op v) atomically in whatever heap p points into (acq_rel, system scope); v is a plain
// (untransformed) value. Native where the platform has the operation; otherwise compare-and-swap on the
// value, or on the aligned 4-byte word holding a 1- or 2-byte value. Out of line: one copy per storage
// type, not one per element of every unrolled loop that calls it.
template <class S>
__device__ __noinline__ void atomic_combine(S* p, S v, Reduction r) {
  using namespace ::iris::detail;
  if constexpr (sizeof(S) >= 4 && integer_info<S>::integer) {
    typedef typename uint_of_size<sizeof(S)>::type U;  // the platform primitives' own spelling
    U* q = reinterpret_cast<U*>(p);
    if (r.mask == 0) {
      switch (r.base) {
        case Base::sum: add(q, static_cast<U>(v), acq_rel, sys); return;
        case Base::band: fetch_and(q, static_cast<U>(v), acq_rel, sys); return;
        case Base::bxor: fetch_xor(q, static_cast<U>(v), acq_rel, sys); return;
        default: break;
      }
    } else if (r.base == Base::band && r.mask == static_cast<S>(~S{0})) {  // bor
      fetch_or(q, static_cast<U>(v), acq_rel, sys);
      return;
    }
  } else if constexpr (is_float32_64<S>::value || is_float16<S>::value) {
    if (r.base == Base::sum) {
      if constexpr (is_float16<S>::value) {
        add16(p, v, acq_rel, sys);
      } else {
        add(p, v, acq_rel, sys);
      }
      return;
    }
  }
  typedef typename accumulator<S>::type A;
  const A operand = transform(to_accumulator<A>(v), r);
  auto apply = [operand, r](S x) {
    return from_accumulator<S>(transform(combine(transform(to_accumulator<A>(x), r), operand, r.base), r));
  };
  if constexpr (sizeof(S) >= 4) {
    cas_loop(p, apply, acq_rel, sys);
  } else if constexpr (sizeof(S) == 2) {
    cas_loop16(p, apply, acq_rel, sys);
  } else {
    // A byte: through the aligned word holding it; the other three bytes are written back unchanged.
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(address & ~static_cast<uintptr_t>(3));
    const unsigned int shift = static_cast<unsigned int>(address & 3) * 8;
    unsigned int old = atomic_load(word, relaxed, sys);
    for (;;) {
      const S current = static_cast<S>((old >> shift) & 0xffu);
      const unsigned int next = apply(current);
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
