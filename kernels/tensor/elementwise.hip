// Element-wise arithmetic in place: t:add_(x), t:sub_(x), t:mul_(x), t:div_(x) (src/lua/iris/tensor_math.lua).
//
// dst[i] = dst[i] op y, y the scalar or the element of src at the same index, over tensors of any
// strides: the Lua side merges dimensions that are contiguous with each other into at most four, pads
// them with size 1, and gives a broadcast dimension of src the stride 0. One kernel per dtype (not a
// template: each instance of a template would compile the whole file again), each a grid-stride loop.
// 16-bit floats and 8-, 16-bit integers compute in float or int, as C++ promotes them; the result is
// converted back to the tensor's type.
namespace {

// The operations, numbered as tensor_math.lua numbers them.
enum Operation : int { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3 };

template <class A>
__device__ A combine(A x, A y, int op) {
  switch (op) {
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    default: return x / y;
  }
}

// A tensor that is one run of elements (after the merge) and 16-byte aligned, as its source: each
// thread takes 16 bytes of each per step, loaded and stored whole. The index arithmetic of the general
// loop (three 64-bit divisions an element) held a 16-bit add at a fraction of the memory's bandwidth
// (docs/perf.md, "The element-wise kernels").
template <class T, class A>
__device__ void contiguous(T* dst, const T* src, T scalar, bool use_scalar, int op, long long n) {
  constexpr int V = 16 / sizeof(T);
  struct alignas(16) Step { T e[V]; };  // read and written whole (not through another type: aliasing)
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long steps = n / V;
  for (long long v = first; v < steps; v += stride) {
    Step x = reinterpret_cast<const Step*>(dst)[v];
    Step y = use_scalar ? x : reinterpret_cast<const Step*>(src)[v];
    if (use_scalar) {
#pragma unroll
      for (int k = 0; k < V; ++k) y.e[k] = scalar;
    }
    // the operation chosen once a step, not once an element (16 of them for 8-bit types)
#define IRIS_ELEMENTWISE_STEP(expr)                                                       \
  _Pragma("unroll") for (int k = 0; k < V; ++k) {                                         \
    const A a = static_cast<A>(x.e[k]), b = static_cast<A>(y.e[k]);                     \
    x.e[k] = static_cast<T>(expr);                                                        \
  }
    switch (op) {
      case kAdd: IRIS_ELEMENTWISE_STEP(a + b) break;
      case kSub: IRIS_ELEMENTWISE_STEP(a - b) break;
      case kMul: IRIS_ELEMENTWISE_STEP(a * b) break;
      default: IRIS_ELEMENTWISE_STEP(a / b) break;
    }
#undef IRIS_ELEMENTWISE_STEP
    reinterpret_cast<Step*>(dst)[v] = x;
  }
  for (long long i = steps * V + first; i < n; i += stride) {  // the last n % V elements
    const T y = use_scalar ? scalar : src[i];
    dst[i] = static_cast<T>(combine(static_cast<A>(dst[i]), static_cast<A>(y), op));
  }
}

// Any strides: sizes s1..s3 of the inner three dimensions, strides d0..d3 of dst and e0..e3 of src. I is
// the index type: 32 bits where every index fits, so that the divisions are the cheap ones.
template <class T, class A, class I>
__device__ void strided(T* dst, const T* src, T scalar, bool use_scalar, int op, I n, I s1, I s2, I s3, long long d0,
                        long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                        long long e3) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I rest = i;
    const I i3 = rest % s3;
    rest /= s3;
    const I i2 = rest % s2;
    rest /= s2;
    const I i1 = rest % s1;
    const I i0 = rest / s1;
    T* p = dst + i0 * d0 + i1 * d1 + i2 * d2 + i3 * d3;
    const T y = use_scalar ? scalar : src[i0 * e0 + i1 * e1 + i2 * e2 + i3 * e3];
    *p = static_cast<T>(combine(static_cast<A>(*p), static_cast<A>(y), op));
  }
}

// T: the element type; A: the type the arithmetic is done in. (The operation stays a run-time switch:
// a uniform branch costs a memory-bound loop nothing, and a template per operation made this file
// compile five times as long, once per process and compiler.)
template <class T, class A>
__device__ void elementwise(T* dst, const T* src, T scalar, bool use_scalar, int op, long long n,
                            long long s1, long long s2, long long s3, long long d0, long long d1, long long d2,
                            long long d3, long long e0, long long e1, long long e2, long long e3) {
  const bool one_run = s3 == n && d3 == 1 && (use_scalar || e3 == 1);
  const bool aligned = ((reinterpret_cast<unsigned long long>(dst) | (use_scalar ? 0ull : reinterpret_cast<unsigned long long>(src))) & 15ull) == 0;
  if (one_run && aligned) {
    contiguous<T, A>(dst, src, scalar, use_scalar, op, n);
  } else if (n <= 0x7fffffffll) {
    strided<T, A, unsigned int>(dst, src, scalar, use_scalar, op, static_cast<unsigned int>(n),
                                static_cast<unsigned int>(s1), static_cast<unsigned int>(s2),
                                static_cast<unsigned int>(s3), d0, d1, d2, d3, e0, e1, e2, e3);
  } else {
    strided<T, A, long long>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
  }
}

}  // namespace

__global__ void elementwise_int8(int8_t* dst, const int8_t* src, int8_t scalar, bool use_scalar, int op, long long n,
                                 long long s1, long long s2, long long s3, long long d0, long long d1,
                                 long long d2, long long d3, long long e0, long long e1, long long e2, long long e3) {
  elementwise<int8_t, int>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_uint8(uint8_t* dst, const uint8_t* src, uint8_t scalar, bool use_scalar, int op,
                                  long long n, long long s1, long long s2, long long s3, long long d0,
                                  long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                  long long e3) {
  elementwise<uint8_t, int>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_int16(int16_t* dst, const int16_t* src, int16_t scalar, bool use_scalar, int op,
                                  long long n, long long s1, long long s2, long long s3, long long d0,
                                  long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                  long long e3) {
  elementwise<int16_t, int>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_int32(int32_t* dst, const int32_t* src, int32_t scalar, bool use_scalar, int op,
                                  long long n, long long s1, long long s2, long long s3, long long d0,
                                  long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                  long long e3) {
  elementwise<int32_t, int32_t>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_uint32(uint32_t* dst, const uint32_t* src, uint32_t scalar, bool use_scalar, int op,
                                   long long n, long long s1, long long s2, long long s3, long long d0,
                                   long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                   long long e3) {
  elementwise<uint32_t, uint32_t>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2,
                                  e3);
}

__global__ void elementwise_int64(int64_t* dst, const int64_t* src, int64_t scalar, bool use_scalar, int op,
                                  long long n, long long s1, long long s2, long long s3, long long d0,
                                  long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                  long long e3) {
  elementwise<int64_t, int64_t>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_uint64(uint64_t* dst, const uint64_t* src, uint64_t scalar, bool use_scalar, int op,
                                   long long n, long long s1, long long s2, long long s3, long long d0,
                                   long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                   long long e3) {
  elementwise<uint64_t, uint64_t>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2,
                                  e3);
}

__global__ void elementwise_float16(iris::half* dst, const iris::half* src, iris::half scalar, bool use_scalar, int op,
                                    long long n, long long s1, long long s2, long long s3, long long d0,
                                    long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                    long long e3) {
  elementwise<iris::half, float>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_bfloat16(iris::bfloat16* dst, const iris::bfloat16* src, iris::bfloat16 scalar,
                                     bool use_scalar, int op, long long n, long long s1, long long s2,
                                     long long s3, long long d0, long long d1, long long d2, long long d3, long long e0,
                                     long long e1, long long e2, long long e3) {
  elementwise<iris::bfloat16, float>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2,
                                     e3);
}

__global__ void elementwise_float32(float* dst, const float* src, float scalar, bool use_scalar, int op, long long n,
                                    long long s1, long long s2, long long s3, long long d0, long long d1,
                                    long long d2, long long d3, long long e0, long long e1, long long e2, long long e3) {
  elementwise<float, float>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}

__global__ void elementwise_float64(double* dst, const double* src, double scalar, bool use_scalar, int op,
                                    long long n, long long s1, long long s2, long long s3, long long d0,
                                    long long d1, long long d2, long long d3, long long e0, long long e1, long long e2,
                                    long long e3) {
  elementwise<double, double>(dst, src, scalar, use_scalar, op, n, s1, s2, s3, d0, d1, d2, d3, e0, e1, e2, e3);
}
