// ctx.ccl.send (src/lua/iris/ccl.lua; docs/collectives.md, "Point to point"): message k to the peer, as
// impl/ccl_p2p.hpp lays it out. Its recv is kernels/ccl/recv.hip.
//   ll:   the data as one-way lines into the peer's inbox; the send waits only for its credit
//   pull: the header alone (where the tensor is); the send waits until the peer has copied it
// To a peer on another node, through the host proxy: impl/ccl_p2p.hpp, "Between nodes".
#include <iris/impl/ccl_p2p.hpp>

namespace {

using namespace iris::ccl;

// Thread t of the grid writes words t, t + threads, ... of the message into the peer's slot.
template <class S>
__device__ __noinline__ void send_lines(const detail::P2p& p, const detail::Flat<const S> t) {
  using namespace ::iris::ccl::detail;
  Line* slot = p.outbox() + kHeaderLines;
  const int64_t words = words_of<S>(t.n);
  const int64_t step = static_cast<int64_t>(gridDim.x) * thread_count();
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * thread_count() + thread_index(); w < words; w += step) {
    line_store(slot + w, t.load(w), p.flag());
  }
}

}  // namespace

// data: rows x cols elements of `dtype`, row stride `stride` (a contiguous tensor is 1 x n). Blocks of up to
// 512 threads (src/lua/iris/ccl.lua, p2p_plan): compiled for them, as the one-way kernels are.
__global__ void IRIS_EARLY_START __launch_bounds__(512) ccl_send(const void* data, long rows, long cols, long stride, int dtype, int peer, int variant,
                         iris::Context ctx) {
  using namespace ::iris::ccl::detail;
  const P2p p = p2p(ctx, peer, true, "ctx.ccl.send");
  if (p.k > kP2pSlots && thread_index() == 0) wait_consumed(p, p.k - kP2pSlots);  // the slot is free
  __syncthreads();
  const int64_t n = static_cast<int64_t>(rows) * cols;
  // A peer on another node: the data as plain bytes through the proxy, then the header, then (below) the
  // flag (impl/ccl_p2p.hpp, "Between nodes").
  const bool remote = p2p_remote(p);
  if (variant == variant::ll && remote) {
    p2p_remote_copy(IRIS_PROXY_PUT, static_cast<const unsigned char*>(data), cols, stride,
                    reinterpret_cast<const unsigned char*>(p.outbox() + kHeaderLines), n, n, n, dtype_size(dtype));
  } else if (variant == variant::ll) {
    IRIS_CCL_FOR_SIZE(dtype, T, send_lines<T>(p, Flat<const T>{static_cast<const T*>(data), cols, stride, n}))
  }
  if (blockIdx.x == 0 && thread_index() <= kP2pWords) {
    const uintptr_t base = static_cast<uintptr_t>(ctx.heap_bases[ctx.rank]);
    const P2pHeader header{static_cast<uint64_t>(n), static_cast<uint64_t>(dtype) | static_cast<uint64_t>(variant) << 8,
                           reinterpret_cast<uintptr_t>(data) - base, rows, cols, stride};
    const int i = thread_index();
    const uint64_t word = i == 0 ? p2p_hash(static_cast<uint64_t>(n), dtype, p.me, peer)
                                 : reinterpret_cast<const uint64_t*>(&header)[i - 1];
    if (remote) {
      ::iris::detail::remote_store(p2p_remote_header(p.outbox()) + i, word);
    } else {
      line_store(p.outbox() + i, word, p.flag());
    }
  }
  p.finish(&p.state->sent[peer], [&] {
    // Every block's puts have completed at the peer: the message is whole there before its flag.
    if (remote) ::iris::detail::remote_atomic(IRIS_PROXY_XCHG, p2p_remote_flag(p.outbox()), p.k);
    if (variant == variant::pull) wait_consumed(p, p.k);  // the peer has copied it: the tensor is free again
  });
}
