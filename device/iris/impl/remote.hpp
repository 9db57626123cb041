// Accesses to ranks on other nodes (docs/multinode.md): the device API's operations reach them through
// the rank's host proxy, by posting a request into the ring in host-mapped memory
// (abi::ProxyRing, ModuleState::proxy) and waiting until the proxy has carried it out with the
// transport. Every remote operation has completed at its target when its call returns.
//
// translate() gives a rank on another node an address with the sign bit set (abi.h: IRIS_REMOTE_TAG):
// each operation of the device API tests that bit after translating, one predictable branch, and only
// a remote address comes here.
#ifndef IRIS_IMPL_REMOTE_HPP
#define IRIS_IMPL_REMOTE_HPP

namespace iris {
namespace detail {

IRIS_DEVICE unsigned int block_thread_index() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
IRIS_DEVICE unsigned int block_thread_count() { return blockDim.x * blockDim.y * blockDim.z; }

IRIS_DEVICE bool is_remote(const void* p) {
  return (static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)) & IRIS_REMOTE_TAG) != 0ull;
}
IRIS_DEVICE int remote_rank(const void* p) {
  return static_cast<int>((static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)) & ~IRIS_REMOTE_TAG) >>
                          IRIS_REMOTE_RANK_SHIFT);
}
IRIS_DEVICE unsigned long long remote_offset(const void* p) {
  return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)) & IRIS_REMOTE_OFFSET_MASK;
}

// A request for the proxy, as the device thread fills it.
struct RemoteRequest {
  unsigned int op, type, atomic;
  int rank;
  unsigned long long offset, local, bytes;
  unsigned long long value[2];
};

// The report of a remote access that could not be done: which, to which rank, and why.
template <class Why>
[[noreturn]] IRIS_DEVICE void remote_failure(const RemoteRequest& r, Why why) {
  report_and_trap("remote access", [&](abi::DeviceMailbox& box) {
    Text text{box.message, 0, static_cast<int>(sizeof box.message)};
    const char* names[] = {"?", "load", "store", "put", "get", "atomic", "copy"};
    text.put("remote ");
    text.put(names[r.op <= IRIS_PROXY_COPY ? r.op : 0]);
    text.put(" on rank ");
    text.put(__iris_module_state.rank);
    text.put(" to rank ");
    text.put(r.rank);
    text.put(" (heap offset ");
    text.put(static_cast<uint64_t>(r.offset));
    if (r.op == IRIS_PROXY_COPY) {  // and where it copies from
      text.put(", from rank ");
      text.put(static_cast<uint64_t>(r.value[0]));
      text.put("'s heap offset ");
      text.put(static_cast<uint64_t>(r.value[1]));
    }
    text.put("): ");
    why(text);
    Text{box.what, 0, static_cast<int>(sizeof box.what)}.put("remote access");
  });
}

// Posts `r`, waits until the proxy has carried it out, and returns the slot's result (loads, atomics).
// Bounded like every device wait: a proxy that never answers (its transport stuck on a dead node)
// becomes a device fault naming this rank and the target. Out of line: one copy per module, not one
// per call site of every atomic and access (inlined, it tripled the compile time of atomic-heavy code).
__device__ __noinline__ void remote_call(RemoteRequest& r) {
  abi::ProxyRing* ring = __iris_module_state.proxy;
  if (ring == nullptr) {
    remote_failure(r, [](Text& t) {
      t.put("this module has no host proxy (the address came from a heap bases table of another job?)");
    });
  }
  // What this thread wrote before (the source of a put) is visible to the proxy and the transport.
  fence(release, sys);
  const unsigned long long ticket =
      fetch_add(reinterpret_cast<unsigned long long*>(&ring->head), 1ull, relaxed, sys);
  abi::ProxySlot* slot = &ring->slots[ticket % IRIS_PROXY_RING_SLOTS];
  unsigned long long* seq = reinterpret_cast<unsigned long long*>(&slot->seq);
  const auto give_up = [&](const char* waiting_for) {
    return [&r, waiting_for](unsigned long long waited) {
      remote_failure(r, [&](Text& t) {
        t.put("this rank's host proxy ");
        t.put(waiting_for);
        t.put(" within ");
        t.put(static_cast<uint64_t>(waited / 1000000000ull));
        t.put(" s: the transport does not complete transfers to that rank (is it alive? docs/multinode.md)");
      });
    };
  };
  bounded_spin([&] { return atomic_load(seq, acquire, sys) == ticket; }, give_up("had no free slot"));
  slot->op = r.op;
  slot->type = r.type;
  slot->atomic = r.atomic;
  slot->rank = r.rank;
  slot->offset = r.offset;
  slot->local = r.local;
  slot->bytes = r.bytes;
  slot->value[0] = r.value[0];
  slot->value[1] = r.value[1];
  slot->status = IRIS_PROXY_STATUS_OK;
  atomic_store(seq, ticket + 1ull, release, sys);
  bounded_spin([&] { return atomic_load(seq, acquire, sys) == ticket + 2ull; }, give_up("did not complete it"));
  const unsigned int status = slot->status;
  r.value[0] = slot->value[0];
  r.value[1] = slot->value[1];
  atomic_store(seq, ticket + IRIS_PROXY_RING_SLOTS, release, sys);
  if (status == IRIS_PROXY_STATUS_OUTSIDE) {
    remote_failure(r, [&r](Text& t) {
      t.put(r.op == IRIS_PROXY_COPY ? "the source or the destination lies outside its rank's heap"
                                    : "the address lies outside that rank's heap");
    });
  }
  if (status != IRIS_PROXY_STATUS_OK) {
    remote_failure(r, [](Text& t) { t.put("the transport failed (the host's log says why)"); });
  }
}

template <class T>
IRIS_DEVICE void to_words(const T& v, unsigned long long* words) {
  const unsigned char* from = reinterpret_cast<const unsigned char*>(&v);
  unsigned char* to = reinterpret_cast<unsigned char*>(words);
  for (unsigned int i = 0; i < sizeof(T); ++i) to[i] = from[i];
}
template <class T>
IRIS_DEVICE T from_words(const unsigned long long* words) {
  T v;
  const unsigned char* from = reinterpret_cast<const unsigned char*>(words);
  unsigned char* to = reinterpret_cast<unsigned char*>(&v);
  for (unsigned int i = 0; i < sizeof(T); ++i) to[i] = from[i];
  return v;
}

// A load or store of `bytes` (1 to 16) at a remote address; `words` holds the value stored, or receives
// the value loaded. Out of line, as remote_call.
__device__ __noinline__ void remote_access(unsigned int op, const void* p, unsigned int bytes, unsigned long long* words) {
  RemoteRequest r{op, 0u, 0u, remote_rank(p), remote_offset(p), 0ull, bytes, {words[0], words[1]}};
  remote_call(r);
  words[0] = r.value[0];
  words[1] = r.value[1];
}

__device__ __noinline__ void remote_width_unsupported(const void* p, unsigned int bytes) {
  RemoteRequest r{IRIS_PROXY_LOAD, 0u, 0u, remote_rank(p), remote_offset(p), 0ull, bytes, {0ull, 0ull}};
  remote_failure(r, [](Text& t) {
    t.put("a load or store of another node's rank moves 1, 2, 4, 8 or 16 bytes; use get_block/put_block for others");
  });
}
template <class T>
IRIS_DEVICE void check_remote_width(const void* p) {
  if (sizeof(T) != 1 && sizeof(T) != 2 && sizeof(T) != 4 && sizeof(T) != 8 && sizeof(T) != 16) {
    remote_width_unsupported(p, sizeof(T));
  }
}

template <class T>
IRIS_DEVICE T remote_load(const T* p) {
  check_remote_width<T>(p);
  unsigned long long words[2] = {0ull, 0ull};
  remote_access(IRIS_PROXY_LOAD, p, sizeof(T), words);
  return from_words<T>(words);
}

template <class T>
IRIS_DEVICE void remote_store(T* p, const T& v) {
  check_remote_width<T>(p);
  unsigned long long words[2] = {0ull, 0ull};
  to_words(v, words);
  remote_access(IRIS_PROXY_STORE, p, sizeof(T), words);
}

// This thread's slice of `bytes` that the block's threads share (at least 256 KiB each: fewer, larger
// transfers are what the transport moves fastest, and a small copy is one request): false where it has none.
IRIS_DEVICE bool block_slice(unsigned long long bytes, unsigned long long& begin, unsigned long long& length) {
  const unsigned long long threads = block_thread_count();
  unsigned long long slice = (bytes + threads - 1) / threads;
  if (slice < 262144ull) slice = 262144ull;
  begin = block_thread_index() * slice;
  if (begin >= bytes) return false;
  length = bytes - begin < slice ? bytes - begin : slice;
  return true;
}

// `bytes` between this process's `local` and a remote address, each thread posting its slice.
__device__ __noinline__ void remote_block(unsigned int op, const void* remote, const void* local,
                                          unsigned long long bytes) {
  unsigned long long begin = 0, length = 0;
  if (!block_slice(bytes, begin, length)) return;
  RemoteRequest r{op, 0u, 0u, remote_rank(remote), remote_offset(remote) + begin,
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(local)) + begin, length, {0ull, 0ull}};
  remote_call(r);
}

// `bytes` from one remote address to another (two ranks of other nodes), each thread posting its slice:
// this rank's proxy gets it into its host memory, then puts it; complete at the destination on return.
__device__ __noinline__ void remote_copy_block(const void* to, const void* from, unsigned long long bytes) {
  unsigned long long begin = 0, length = 0;
  if (!block_slice(bytes, begin, length)) return;
  RemoteRequest r{IRIS_PROXY_COPY, 0u, 0u, remote_rank(to), remote_offset(to) + begin, 0ull, length,
                  {static_cast<unsigned long long>(remote_rank(from)), remote_offset(from) + begin}};
  remote_call(r);
}

template <class T> struct proxy_type;
template <> struct proxy_type<int> { static constexpr unsigned int value = IRIS_PROXY_I32; };
template <> struct proxy_type<unsigned int> { static constexpr unsigned int value = IRIS_PROXY_U32; };
template <> struct proxy_type<long> { static constexpr unsigned int value = IRIS_PROXY_I64; };
template <> struct proxy_type<unsigned long> { static constexpr unsigned int value = IRIS_PROXY_U64; };
template <> struct proxy_type<long long> { static constexpr unsigned int value = IRIS_PROXY_I64; };
template <> struct proxy_type<unsigned long long> { static constexpr unsigned int value = IRIS_PROXY_U64; };
template <> struct proxy_type<float> { static constexpr unsigned int value = IRIS_PROXY_F32; };
template <> struct proxy_type<double> { static constexpr unsigned int value = IRIS_PROXY_F64; };
template <> struct proxy_type<::iris::half> { static constexpr unsigned int value = IRIS_PROXY_HALF; };
template <> struct proxy_type<::iris::bfloat16> { static constexpr unsigned int value = IRIS_PROXY_BFLOAT16; };

// An atomic on another node's rank: the old value's bits. Out of line, as remote_call.
__device__ __noinline__ unsigned long long remote_atomic_bits(unsigned int atomic, unsigned int type, const void* p,
                                                              unsigned int bytes, unsigned long long value,
                                                              unsigned long long compare) {
  RemoteRequest r{IRIS_PROXY_ATOMIC, type, atomic, remote_rank(p), remote_offset(p), 0ull, bytes, {value, compare}};
  remote_call(r);
  return r.value[0];
}

template <class T>
IRIS_DEVICE T remote_atomic(unsigned int atomic, T* p, T v, T compare = T()) {
  typedef typename uint_of_size<sizeof(T)>::type U;
  const unsigned long long bits = remote_atomic_bits(atomic, proxy_type<T>::value, p, sizeof(T), bit_cast<U>(v),
                                                     bit_cast<U>(compare));
  return bit_cast<T>(static_cast<U>(bits));
}

}  // namespace detail
}  // namespace iris

#endif  // IRIS_IMPL_REMOTE_HPP
