// The inter-node step of ctx.ccl's reductions on a job over several nodes (src/lua/iris/ccl_nodes.lua,
// docs/multinode.md): out[i] = op over the nodes, in node order, of partial[i] as held by each node's
// leader (the node's own reduction, left there by ctx.ccl on that node's ranks). The leaders of other
// nodes are read through the device API, which sends those loads through the host proxy; elements are
// combined as ctx.ccl combines them (ccl_types.hpp: the same accumulator and operations), in one order
// every rank shares, so every rank gets the same bits.
#include <iris/impl/ccl_call.hpp>

namespace {

using namespace iris::ccl;

// T is the dtype's element type; the values travel and combine as ctx.ccl's do: integers as their
// unsigned storage type under the reduction's transform, 16-bit floats accumulated in float.
template <class T>
__device__ __noinline__ void run(void* out_bytes, const void* partial_bytes, long long n, int op, const int* leaders,
                                 int nodes, iris::Context ctx) {
  typedef typename detail::storage<T>::type S;
  typedef typename detail::accumulator<S>::type A;
  S* out = static_cast<S*>(out_bytes);
  const S* partial = static_cast<const S*>(partial_bytes);
  const detail::Reduction r = detail::reduction<T>(static_cast<Op>(op));
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    A acc = detail::transform(detail::to_accumulator<A>(ctx.load(partial + i, leaders[0])), r);
    for (int k = 1; k < nodes; ++k) {
      acc = detail::combine(acc, detail::transform(detail::to_accumulator<A>(ctx.load(partial + i, leaders[k])), r), r.base);
    }
    out[i] = detail::from_accumulator<S>(detail::transform(acc, r));
  }
}

}  // namespace

__global__ void nodes_combine(void* out, const void* partial, long long n, int dtype, int op, const int* leaders,
                              int nodes, iris::Context ctx) {
  IRIS_CCL_FOR_DTYPE(dtype, T, run<T>(out, partial, n, op, leaders, nodes, ctx))
}
