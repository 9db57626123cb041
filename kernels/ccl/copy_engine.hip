// The call around ctx.ccl's variant copy_engine (src/lua/iris/ccl.lua; docs/collectives.md, "copy_engine"):
// the data move by copies the host enqueues on the stream (the GPU's copy engine, iris_copy_device_async)
// between two one-block kernels of the call protocol (impl/ccl_call.hpp):
//   ccl_copy_engine_begin: the arrival (descriptor, then arrival, into every member's state) and the
//     wait for every member's: their outputs are free, and ranks that call differently get the report
//     every variant gives;
//   ccl_copy_engine_end: the deliveries (this rank's copies, before it in stream order, are done) and
//     the wait for every member's: this rank's output is complete, no peer writes it any more.
// Both kernels read the same call number (the first does not count the call; the second does) and make
// the same descriptor, so the call is one call of the protocol, as a one-kernel variant's.
#include <iris/impl/ccl_call.hpp>

namespace {

using namespace iris::ccl;

// "ctx.ccl.<collective>" or "ctx.ops.<op>" (ctx.ops' variant copy_engine, src/lua/iris/ops.lua), for the
// reports of a wait that ran out of time.
#define IRIS_CCL_COPY_ENGINE_NAME(name, id, family, variants) \
  case id:                                                    \
    return "ctx." #family "." #name;
IRIS_DEVICE const char* call_name(int collective) {
  switch (collective) { IRIS_COLLECTIVE_CODES(IRIS_CCL_COPY_ENGINE_NAME) default: return "ctx.ccl"; }
}
#undef IRIS_CCL_COPY_ENGINE_NAME

// a, b: the call's tensors as every rank passes them (their heap offsets are part of the descriptor);
// count: the elements of a member's input, rows and cols 1 and 0 (ctx.ccl); for ctx.ops' variant
// copy_engine, M x N x K as the op's kernels describe it (rows, cols, count: impl/ops_call.hpp). One
// block on every rank.
IRIS_DEVICE detail::Call copy_engine_call(const void* a, const void* b, int collective, int dtype, int root, long count,
                                          long rows, long cols, int dim, uint32_t group_lo, uint32_t group_hi,
                                          const iris::Context& ctx) {
  const uint64_t group = static_cast<uint64_t>(group_hi) << 32 | group_lo;
  detail::Call call = detail::make_call(ctx, call_name(collective), collective, group, detail::variant::copy_engine,
                                        dtype, 0, root, static_cast<uint64_t>(count), static_cast<uint64_t>(rows), dim,
                                        0, 0, {a, count}, {b, count});
  call.mine.cols = static_cast<uint64_t>(cols);
  return call;
}

}  // namespace

__global__ void ccl_copy_engine_begin(const void* a, const void* b, int collective, int dtype, int root, long count,
                                      long rows, long cols, int dim, uint32_t group_lo, uint32_t group_hi,
                                      iris::Context ctx) {
  copy_engine_call(a, b, collective, dtype, root, count, rows, cols, dim, group_lo, group_hi, ctx).begin();
}

__global__ void ccl_copy_engine_end(const void* a, const void* b, int collective, int dtype, int root, long count,
                                    long rows, long cols, int dim, uint32_t group_lo, uint32_t group_hi,
                                    iris::Context ctx) {
  copy_engine_call(a, b, collective, dtype, root, count, rows, cols, dim, group_lo, group_hi, ctx).end(true);
}
