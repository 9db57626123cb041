// Header coverage: every call of the iris device API, instantiated for every type it supports, with
// every memory-order semantic and scope reachable. The unit tests compile this through NVRTC, hiprtc
// and the host C++ compiler, so a platform where any of it does not compile fails a test.

template <class T>
__device__ void every_access(T* buf, const T* src, size_t n, iris::Context ctx, int peer) {
  const uint64_t* hb = ctx.heap_bases;
  const int me = ctx.rank;
  T* remote = iris::translate(buf, me, peer, hb);
  (void)remote;
  T v = iris::load(src, me, peer, hb);
  iris::store(buf, v, me, peer, hb);
  iris::get(src, buf, me, peer, hb);
  iris::put(src, buf, me, peer, hb);
  iris::copy(src, buf, me, peer, me, hb);
  iris::put_block(src, buf, n, me, peer, hb);
  iris::get_block(src, buf, n, me, peer, hb);
  iris::copy_block(src, buf, n, peer, me, me, hb);
  (void)ctx.translate(buf, peer);
  ctx.store(buf, ctx.load(src, peer), peer);
  ctx.get(src, buf, peer);
  ctx.put(src, buf, peer);
  ctx.copy(src, buf, peer, me);
  ctx.put_block(src, buf, n, peer);
  ctx.get_block(src, buf, n, peer);
  ctx.copy_block(src, buf, n, me, peer);
}

template <class T>
__device__ T arithmetic_atomics(T* p, T v, iris::Context ctx, int peer, iris::Semantic sem, iris::Scope scope) {
  const uint64_t* hb = ctx.heap_bases;
  const int me = ctx.rank;
  T r = iris::atomic_add(p, v, me, peer, hb, sem, scope);
  r = r + iris::atomic_sub(p, v, me, peer, hb, sem, scope);
  r = r + iris::atomic_xchg(p, v, me, peer, hb, sem, scope);
  r = r + iris::atomic_min(p, v, me, peer, hb, sem, scope);
  r = r + iris::atomic_max(p, v, me, peer, hb, sem, scope);
  r = r + iris::atomic_cas(p, v, r, me, peer, hb, sem, scope);
  r = r + iris::atomic_add(p, v, me, peer, hb);  // the defaults: acq_rel, sys
  r = r + ctx.atomic_add(p, v, peer, sem, scope);
  r = r + ctx.atomic_sub(p, v, peer, sem, scope);
  r = r + ctx.atomic_xchg(p, v, peer, sem, scope);
  r = r + ctx.atomic_min(p, v, peer, sem, scope);
  r = r + ctx.atomic_max(p, v, peer, sem, scope);
  r = r + ctx.atomic_cas(p, v, r, peer, sem, scope);
  r = r + ctx.atomic_add(p, v, peer);
  return r;
}

template <class T>
__device__ T integer_atomics(T* p, T v, iris::Context ctx, int peer, iris::Semantic sem, iris::Scope scope) {
  const uint64_t* hb = ctx.heap_bases;
  const int me = ctx.rank;
  T r = iris::atomic_and(p, v, me, peer, hb, sem, scope);
  r |= iris::atomic_or(p, v, me, peer, hb, sem, scope);
  r ^= iris::atomic_xor(p, v, me, peer, hb, sem, scope);
  r |= ctx.atomic_and(p, v, peer, sem, scope) | ctx.atomic_or(p, v, peer, sem, scope) |
       ctx.atomic_xor(p, v, peer, sem, scope) | ctx.atomic_xor(p, v, peer);
  return r;
}

template <class T>
__device__ float float16_atomics(T* p, T v, iris::Context ctx, int peer, iris::Semantic sem, iris::Scope scope) {
  const uint64_t* hb = ctx.heap_bases;
  float r = float(iris::atomic_add(p, v, ctx.rank, peer, hb, sem, scope));
  r += float(iris::atomic_sub(p, v, ctx.rank, peer, hb, sem, scope));
  r += float(ctx.atomic_add(p, v, peer, sem, scope)) + float(ctx.atomic_sub(p, v, peer));
  return r;
}

template <class T>
__device__ T flags(T* flag, T v, iris::Context ctx, int peer, iris::Semantic sem, iris::Scope scope) {
  const uint64_t* hb = ctx.heap_bases;
  iris::signal_set(flag, v, ctx.rank, peer, hb);
  T r = iris::signal_add(flag, v, ctx.rank, peer, hb);
  ctx.signal_set(flag, v, peer);
  r += ctx.signal_add(flag, v, peer);
  for (int c = 0; c < 6; ++c) r += iris::wait_until(flag, static_cast<iris::Cmp>(c), v, sem, scope);
  r += ctx.wait_until(flag, iris::Cmp::ge, v) + iris::wait_until(flag, iris::Cmp::eq, v);
  return r;
}

#define EVERY_ACCESS(T) every_access(reinterpret_cast<T*>(buf), reinterpret_cast<const T*>(src), n, ctx, peer)
#define ARITHMETIC(T) arithmetic_atomics(reinterpret_cast<T*>(buf), static_cast<T>(1), ctx, peer, s, c)
#define INTEGER(T) integer_atomics(reinterpret_cast<T*>(buf), static_cast<T>(1), ctx, peer, s, c)

__global__ void header_coverage(void* buf, const void* src, size_t n, iris::Context ctx, int peer, int sem,
                                int scope, double* sink) {
  const iris::Semantic s = static_cast<iris::Semantic>(sem);
  const iris::Scope c = static_cast<iris::Scope>(scope);
  EVERY_ACCESS(bool); EVERY_ACCESS(int8_t); EVERY_ACCESS(uint8_t); EVERY_ACCESS(int16_t);
  EVERY_ACCESS(uint16_t); EVERY_ACCESS(int32_t); EVERY_ACCESS(uint32_t); EVERY_ACCESS(int64_t);
  EVERY_ACCESS(uint64_t); EVERY_ACCESS(float); EVERY_ACCESS(double); EVERY_ACCESS(iris::half);
  EVERY_ACCESS(iris::bfloat16); EVERY_ACCESS(float4);
  double r = 0;
  r += ARITHMETIC(int32_t); r += ARITHMETIC(uint32_t); r += ARITHMETIC(int64_t); r += ARITHMETIC(uint64_t);
  r += ARITHMETIC(long long); r += ARITHMETIC(unsigned long long); r += ARITHMETIC(float); r += ARITHMETIC(double);
  r += INTEGER(int32_t); r += INTEGER(uint32_t); r += INTEGER(int64_t); r += INTEGER(uint64_t);
  r += float16_atomics(reinterpret_cast<iris::half*>(buf), iris::half(1.0f), ctx, peer, s, c);
  r += float16_atomics(reinterpret_cast<iris::bfloat16*>(buf), iris::bfloat16(1.0f), ctx, peer, s, c);
  r += flags(reinterpret_cast<int32_t*>(buf), 1, ctx, peer, s, c);
  r += flags(reinterpret_cast<uint32_t*>(buf), 1u, ctx, peer, s, c);
  r += flags(reinterpret_cast<int64_t*>(buf), static_cast<int64_t>(1), ctx, peer, s, c);
  r += flags(reinterpret_cast<uint64_t*>(buf), static_cast<uint64_t>(1), ctx, peer, s, c);
  iris::fence(s, c);
  iris::fence();
  *sink = r + ctx.get_rank() + ctx.get_num_ranks();
}

// The GPU programming model the cpu backend reproduces, in both spellings.
__global__ void model_coverage(float* out, int n) {
  __shared__ float tile[64];
  extern __shared__ float dynamic[];
  HIP_DYNAMIC_SHARED(int, hip_dynamic)
  const int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  tile[threadIdx.x % 64] = static_cast<float>(i);
  dynamic[threadIdx.x] = 1.0f;
  hip_dynamic[threadIdx.x] = 2;
  __syncthreads();
  if (i < n) {
    out[i] = tile[(threadIdx.x + 1) % 64] + dynamic[0] + static_cast<float>(hip_dynamic[0]) +
             static_cast<float>(gridDim.x + blockDim.y + hipGridDim_y + blockIdx.z);
    atomicAdd(out, 1.0f);
    atomicAdd(reinterpret_cast<int*>(out) + 1, 1);
    __threadfence();
  }
}

// Warp-level operations in both spellings, for every type a shuffle moves.
template <class T>
__device__ T every_shuffle(T v, int arg) {
  T r = __shfl_sync(0xffffffffu, v, arg) + __shfl_up_sync(0xffffffffu, v, 1) + __shfl_down_sync(0xffffffffu, v, 2, 16) +
        __shfl_xor_sync(0xffffffffu, v, arg, 8);
  return r + __shfl(v, arg) + __shfl_up(v, 1u) + __shfl_down(v, 2u, 16) + __shfl_xor(v, arg, 8);
}
template <class T>
__device__ float every_shuffle16(T v, int arg) {
  return float(__shfl_sync(0xffffffffu, v, arg)) + float(__shfl_up_sync(0xffffffffu, v, 1)) +
         float(__shfl_down_sync(0xffffffffu, v, 2, 16)) + float(__shfl_xor_sync(0xffffffffu, v, arg, 8)) +
         float(__shfl(v, arg)) + float(__shfl_xor(v, arg));
}

__global__ void warp_coverage(double* out, int arg) {
  const int i = threadIdx.x;
  double r = every_shuffle(i, arg) + every_shuffle(static_cast<unsigned int>(i), arg) +
             every_shuffle(static_cast<int64_t>(i), arg) + every_shuffle(static_cast<uint64_t>(i), arg) +
             every_shuffle(static_cast<long long>(i), arg) + every_shuffle(static_cast<float>(i), arg) +
             every_shuffle(static_cast<double>(i), arg) + every_shuffle(static_cast<int8_t>(i), arg) +
             every_shuffle(static_cast<int16_t>(i), arg);
  r += every_shuffle16(iris::half(1.0f), arg) + every_shuffle16(iris::bfloat16(1.0f), arg);
  r += __ballot_sync(0xffffffffu, i & 1) + __any_sync(0xffffffffu, i) + __all_sync(0xffffffffu, i) + __activemask();
  r += static_cast<double>(__ballot(i & 1)) + __any(i) + __all(i) + __lane_id() + warpSize;
  __syncwarp();
  __syncwarp(0xffffffffu);
  out[i] = r;
}

template <class T, int Scale>
__global__ void scale(T* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<T>(static_cast<float>(x[i]) * Scale);
}
