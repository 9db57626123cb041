// ctx.ccl.recv (src/lua/iris/ccl.lua; docs/collectives.md, "Point to point"): message k from the peer,
// as impl/ccl_p2p.hpp lays it out, checked against this recv's size and dtype. Its send is
// kernels/ccl/send.hip, whose variant the header names.
#include <iris/impl/ccl_p2p.hpp>

namespace {

using namespace iris::ccl;

// The spin of a line that was not there at the first look, out of line as OneWay::receive_batch's
// (impl/ccl_ll.hpp, wait_lines).
__device__ __noinline__ uint64_t wait_line(const detail::P2p& p, const detail::Line* line) {
  uint64_t data = 0;
  detail::spin_until([&] { return detail::line_load(line, p.flag(), data); },
                     [&](unsigned long long waited) { detail::p2p_not_sent(p, waited); });
  return data;
}

// Thread t of the grid takes words t, t + threads, ... of the message: from the lines in this rank's
// inbox (ll), or from the sender's tensor in its heap (pull).
template <class S>
__device__ __noinline__ void receive(const detail::P2p& p, const detail::Flat<S> t, const detail::P2pHeader& header,
                                     int variant, bool remote) {
  using namespace ::iris::ccl::detail;
  const int64_t words = words_of<S>(t.n);
  const int64_t step = static_cast<int64_t>(gridDim.x) * thread_count();
  const int64_t first = static_cast<int64_t>(blockIdx.x) * thread_count() + thread_index();
  if (variant == variant::pull && remote) {  // straight from the sender's tensor, through the proxy
    const unsigned char* from = reinterpret_cast<const unsigned char*>(p.ctx.heap_bases[p.peer] + header.offset);
    p2p_remote_copy(IRIS_PROXY_GET, reinterpret_cast<const unsigned char*>(t.ptr), t.cols, t.stride, from, header.cols,
                    header.stride, t.n, sizeof(S));
    return;
  }
  if (remote) {  // the bytes in this rank's own slot (impl/ccl_p2p.hpp, "Between nodes")
    const uint64_t* slot = reinterpret_cast<const uint64_t*>(p.inbox(p.peer) + kHeaderLines);
    for (int64_t w = first; w < words; w += step) t.store(w, ::iris::detail::atomic_load(slot + w, ::iris::relaxed, ::iris::sys));
    return;
  }
  if (variant == variant::pull) {
    const uintptr_t base = static_cast<uintptr_t>(p.ctx.heap_bases[p.peer]);
    const Flat<const S> from{reinterpret_cast<const S*>(base + header.offset), header.cols, header.stride, t.n};
    for (int64_t w = first; w < words; w += step) t.store(w, from.load(w));
    return;
  }
  const Line* slot = p.inbox(p.peer) + kHeaderLines;
  for (int64_t w = first; w < words; w += step) {
    uint64_t x = 0;
    if (!line_load(slot + w, p.flag(), x)) x = wait_line(p, slot + w);
    t.store(w, x);
  }
}

}  // namespace

// data: rows x cols elements of `dtype`, row stride `stride` (a contiguous tensor is 1 x n). Blocks of up to
// 512 threads (src/lua/iris/ccl.lua, p2p_plan): compiled for them, as the one-way kernels are.
__global__ void IRIS_EARLY_START __launch_bounds__(512) ccl_recv(void* data, long rows, long cols, long stride, int dtype, int peer, iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const P2p p = p2p(ctx, peer, false, "ctx.ccl.recv");
  const int64_t n = static_cast<int64_t>(rows) * cols;
  __shared__ uint64_t words[1 + kP2pWords];
  const bool remote = p2p_remote(p);
  if (thread_index() == 0 && remote) {
    // Between nodes: the flag, written after the rest (impl/ccl_p2p.hpp, "Between nodes"), then the rest.
    Line* slot = p.inbox(peer);
    const uint64_t* flag = p2p_remote_flag(slot);
    spin_until([&] { return ::iris::detail::atomic_load(flag, ::iris::acquire, ::iris::sys) == p.k; },
               [&](unsigned long long waited) { p2p_not_sent(p, waited); });
    __threadfence_system();
    for (int i = 0; i <= kP2pWords; ++i) words[i] = ::iris::detail::atomic_load(p2p_remote_header(slot) + i, ::iris::relaxed, ::iris::sys);
  } else if (thread_index() == 0) {
    const Line* header = p.inbox(peer);
    for (int i = 0; i <= kP2pWords; ++i) {
      if (!line_load(header + i, p.flag(), words[i])) words[i] = wait_line(p, header + i);
    }
  }
  if (thread_index() == 0) {
    if (words[0] != p2p_hash(static_cast<uint64_t>(n), dtype, peer, p.me)) {
      p2p_mismatch(p, header_of(words + 1),
                   static_cast<uint64_t>(n), dtype);
    }
    // A pulled message is read with plain loads from the sender's heap: none may be served from before
    // the header was seen (the one-way lines carry their own flag, so they need no fence).
    if ((header_of(words + 1).kind >> 8 & 0xff) == static_cast<uint64_t>(variant::pull)) __threadfence_system();
  }
  __syncthreads();
  const P2pHeader header = header_of(words + 1);
  const int variant = static_cast<int>(header.kind >> 8 & 0xff);
  IRIS_CCL_FOR_SIZE(dtype, T, receive<T>(p, Flat<T>{static_cast<T*>(data), cols, stride, n}, header, variant, remote))
  p.finish(&p.state->received[peer], [&] {
    // Every block has read its lines (or the sender's tensor): the sender may reuse the slot, or its tensor.
    ::iris::signal_set(&p.state->consumed[p.me], p.k, p.me, peer, ctx.heap_bases);
  });
}
