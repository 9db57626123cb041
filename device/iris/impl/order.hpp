// The memory-order primitives of this platform, and the compare-exchange loops built on them for the
// operations a platform lacks natively.
//
// Each order_<platform>.hpp provides, in iris::detail:
//   atomic_load / atomic_store      2-, 4- and 8-byte values, any type (moved as bits)
//   cas                             4- and 8-byte unsigned; returns the value found
//   exchange, fetch_and/or/xor      unsigned int, unsigned long long
//   fetch_add                       int, unsigned int, long long, unsigned long long (+ float, double
//                                   where IRIS_NATIVE_FLOAT_ADD)
//   fetch_min/max                   the four integer types where IRIS_NATIVE_INT_MINMAX
//   fetch_add_half_bits / _bfloat16_bits where IRIS_NATIVE_HALF_ADD / IRIS_NATIVE_BFLOAT16_ADD
//   fence_impl, pause (back-off in spins), clock_ns, trap
#ifndef IRIS_IMPL_ORDER_HPP
#define IRIS_IMPL_ORDER_HPP

namespace iris {
namespace detail {
// A load can only acquire and a store only release: acq_rel narrows to the half that applies.
IRIS_DEVICE Semantic load_semantic(Semantic sem) { return (sem == acquire || sem == acq_rel) ? acquire : relaxed; }
IRIS_DEVICE Semantic store_semantic(Semantic sem) { return (sem == release || sem == acq_rel) ? release : relaxed; }
}  // namespace detail
}  // namespace iris

#if defined(IRIS_PLATFORM_CUDA)
#include "order_cuda.hpp"
#elif defined(IRIS_PLATFORM_HIP)
#include "order_hip.hpp"
#else
#include "order_cpu.hpp"
#endif

namespace iris {

IRIS_DEVICE void fence(Semantic sem, Scope scope) { detail::fence_impl(sem, scope); }

#if !(defined(IRIS_PLATFORM_CPU) && defined(IRIS_CPU_WEAK_MEMORY))
namespace detail {
// The device API's plain accesses (rma.hpp): the memory itself, except under the cpu backend's weak
// memory model, whose versions (order_cpu.hpp) go through the executor's store buffers.
template <class T>
IRIS_DEVICE T plain_load(const T* p) { return *p; }
template <class T>
IRIS_DEVICE void plain_store(T* p, const T& v, bool /*to another rank*/) { *p = v; }
}  // namespace detail
#endif

namespace detail {

// Read-modify-write of a 4- or 8-byte value through compare-exchange: *p = op(*p); returns the old
// value. Lock-free: a failed exchange means another thread's succeeded.
template <class T, class Op>
IRIS_DEVICE T cas_loop(T* p, Op op, Semantic sem, Scope scope) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  U* word = reinterpret_cast<U*>(p);
  U old = atomic_load(word, relaxed, scope);
  for (;;) {
    const U desired = bit_cast<U>(static_cast<T>(op(bit_cast<T>(old))));
    const U seen = cas(word, old, desired, sem, scope);
    if (seen == old) return bit_cast<T>(old);
    old = seen;
  }
}

// The same for a 2-byte value, through the aligned 4-byte word that holds it (every platform has a
// 4-byte compare-exchange; the neighbouring 2 bytes are written back unchanged).
template <class T, class Op>
IRIS_DEVICE T cas_loop16(T* p, Op op, Semantic sem, Scope scope) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(address & ~static_cast<uintptr_t>(3));
  const unsigned int shift = static_cast<unsigned int>(address & 2) * 8;
  const unsigned int mask = 0xffffu << shift;
  unsigned int old = atomic_load(word, relaxed, scope);
  for (;;) {
    const unsigned short current = static_cast<unsigned short>((old & mask) >> shift);
    const unsigned short next = bit_cast<unsigned short>(static_cast<T>(op(bit_cast<T>(current))));
    const unsigned int desired = (old & ~mask) | (static_cast<unsigned int>(next) << shift);
    const unsigned int seen = cas(word, old, desired, sem, scope);
    if (seen == old) return bit_cast<T>(current);
    old = seen;
  }
}

}  // namespace detail
}  // namespace iris

#endif  // IRIS_IMPL_ORDER_HPP
