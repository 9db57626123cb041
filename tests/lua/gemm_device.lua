-- The GEMM building blocks of the device header (device/iris/gemm.hpp) in a user's kernel: each input
-- type, A and B stored either way, sizes with partial tiles and a partial last step of k, k split in two
-- calls, the tile stored at an offset of a larger matrix, accumulated atomically, tiles whose origin is
-- off the operands' 16-byte chunks, and for_each covering the tile once. On the cpu backend this runs
-- NVIDIA's fragment arithmetic over emulated instructions.
package.path = arg[0]:match("^(.*/)") .. "../lua_helpers/?.lua;" .. package.path
local g = require "gemm_reference"

local ctx = iris.init { heap_size = "16MiB" }

local mod = iris.compile [[
using namespace iris;

// c[row0 + i][col0 + j] (= or +=) (A B)[i][j]; A is m x k, B k x n, each stored row-major or transposed.
template <class T>
__device__ void multiply_tiles(const T* a, const T* b, float* c, long m, long n, long k, long ldc, int a_transposed,
                               int b_transposed, int split, long row0, long col0, int atomically) {
  const gemm::Matrix<T> A = a_transposed ? gemm::matrix(a, m, k, 1, m) : gemm::matrix(a, m, k, k);
  const gemm::Matrix<T> B = b_transposed ? gemm::matrix(b, k, n, 1, k) : gemm::matrix(b, k, n, n);
  const ccl::View<float> C = ccl::view(c + row0 * ldc + col0, m, n, ldc);
  for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    gemm::Accumulator acc;
    gemm::clear(acc);
    if (split) {
      const long h = k / 2;
      gemm::multiply(acc, A.columns(0, h), B.row_range(0, h), tile.row, tile.col);
      gemm::multiply(acc, A.columns(h, k - h), B.row_range(h, k - h), tile.row, tile.col);
    } else {
      gemm::multiply(acc, A, B, tile.row, tile.col);
    }
    if (atomically) {
      gemm::atomic_add(acc, C, tile);
    } else {
      gemm::store(acc, C, tile);
    }
  }
}

// One kernel per input type (the launch finds kernels by their written names).
__global__ void multiply_float16(const iris::half* a, const iris::half* b, float* c, long m, long n, long k, long ldc,
                                 int a_transposed, int b_transposed, int split, long row0, long col0, int atomically) {
  multiply_tiles(a, b, c, m, n, k, ldc, a_transposed, b_transposed, split, row0, col0, atomically);
}
__global__ void multiply_bfloat16(const iris::bfloat16* a, const iris::bfloat16* b, float* c, long m, long n, long k,
                                  long ldc, int a_transposed, int b_transposed, int split, long row0, long col0,
                                  int atomically) {
  multiply_tiles(a, b, c, m, n, k, ldc, a_transposed, b_transposed, split, row0, col0, atomically);
}
__global__ void multiply_float32(const float* a, const float* b, float* c, long m, long n, long k, long ldc,
                                 int a_transposed, int b_transposed, int split, long row0, long col0, int atomically) {
  multiply_tiles(a, b, c, m, n, k, ldc, a_transposed, b_transposed, split, row0, col0, atomically);
}

// c (m x n, row-major) = rows [row0, row0 + m) of A times columns [col0, col0 + n) of B: tiles whose origin
// in the operands is off the 16-byte chunks the operands' rows are made of. A is held transposed
// (k rows of a_rows) and B row-major (k rows of b_cols), so both are staged along the offset dimension.
template <class T>
__device__ void multiply_window(const T* a, const T* b, float* c, long m, long n, long k, long a_rows, long b_cols,
                                long row0, long col0) {
  const gemm::Matrix<T> A = gemm::matrix(a, a_rows, k, 1, a_rows), B = gemm::matrix(b, k, b_cols, b_cols);
  for (int64_t t = blockIdx.x; t < gemm::tiles(m, n); t += gridDim.x) {
    const ccl::Tile tile = gemm::tile(t, m, n);
    gemm::Accumulator acc;
    gemm::clear(acc);
    gemm::multiply(acc, A, B, row0 + tile.row, col0 + tile.col);
    gemm::store(acc, ccl::view(c, m, n, n), tile);
  }
}
__global__ void window_float16(const iris::half* a, const iris::half* b, float* c, long m, long n, long k, long a_rows,
                               long b_cols, long row0, long col0) {
  multiply_window(a, b, c, m, n, k, a_rows, b_cols, row0, col0);
}
__global__ void window_float32(const float* a, const float* b, float* c, long m, long n, long k, long a_rows,
                               long b_cols, long row0, long col0) {
  multiply_window(a, b, c, m, n, k, a_rows, b_cols, row0, col0);
}

// counts[i][j] += 1 for every element (i, j) of the tile some thread holds: as clear() leaves the
// accumulator, and after a multiply of each input type (on sm_90a a 16-bit one leaves wgmma's layout,
// a float32 one mma.sync's).
__global__ void coverage(int* counts) {
  gemm::Accumulator acc;
  gemm::clear(acc);
  gemm::for_each(acc, [&](int i, int j, float) { atomicAdd(&counts[i * gemm::kTileN + j], 1); });
}
template <class T>
__device__ void coverage_after(const T* one, int* counts) {
  gemm::Accumulator acc;
  gemm::clear(acc);
  gemm::multiply(acc, gemm::matrix(one, 1, 1, 1), gemm::matrix(one, 1, 1, 1), 0, 0);
  gemm::for_each(acc, [&](int i, int j, float v) {
    atomicAdd(&counts[i * gemm::kTileN + j], i == 0 && j == 0 ? static_cast<int>(v) : 1);
  });
}
__global__ void coverage_float16(const iris::half* one, int* counts) { coverage_after(one, counts); }
__global__ void coverage_bfloat16(const iris::bfloat16* one, int* counts) { coverage_after(one, counts); }
__global__ void coverage_float32(const float* one, int* counts) { coverage_after(one, counts); }
]]

-- The product as stored in a matrix of ldc columns at (row0, col0); other elements stay `other`.
local function placed(c, m, n, rows, ldc, row0, col0, other)
  local out = {}
  for i = 0, rows * ldc - 1 do out[i + 1] = other end
  for i = 0, m - 1 do
    for j = 0, n - 1 do out[(row0 + i) * ldc + col0 + j + 1] = c[i * n + j + 1] end
  end
  return out
end

-- Runs one multiplication and checks it. `case`: dtype, m, n, k, a_transposed, b_transposed, split,
-- atomically (twice on a zeroed result: doubled).
local function run(case)
  local m, n, k = case.m, case.n, case.k
  local av, bv = g.values(0, m, k, 1), g.values(0, k, n, 2)
  local a = ctx:zeros(case.at and { k, m } or { m, k }, case.dtype)
  local b = ctx:zeros(case.bt and { n, k } or { k, n }, case.dtype)
  -- A transposed holds A's column i as its row i.
  local function stored(values, rows, cols, transposed)
    if not transposed then return values end
    local t = {}
    for i = 0, rows - 1 do for j = 0, cols - 1 do t[j * rows + i + 1] = values[i * cols + j + 1] end end
    return t
  end
  g.fill(a, stored(av, m, k, case.at))
  g.fill(b, stored(bv, k, n, case.bt))
  local row0, col0 = case.row0 or 0, case.col0 or 0
  local rows, ldc = m + row0 + 1, n + col0 + 3
  local c = ctx:full({ rows, ldc }, case.atomically and 0 or -7, "float32")
  local times = case.atomically and 2 or 1
  for _ = 1, times do
    mod["multiply_" .. case.dtype]:launch({ grid = 3, block = 256 }, a, b, c, m, n, k, ldc, case.at and 1 or 0,
      case.bt and 1 or 0, case.split and 1 or 0, row0, col0, case.atomically and 1 or 0)
  end
  local product = g.matmul(av, bv, m, n, k)
  for i = 1, #product do product[i] = product[i] * times end
  g.check(ctx, c, placed(product, m, n, rows, ldc, row0, col0, case.atomically and 0 or -7),
    ("%s %d x %d x %d%s%s%s%s"):format(case.dtype, m, n, k, case.at and " A transposed" or "",
      case.bt and " B transposed" or "", case.split and " k split" or "", case.atomically and " atomically" or ""))
end

iris.test("each input type, A and B stored either way, partial tiles and a partial step of k", function()
  for _, dtype in ipairs(g.dtypes) do
    for _, layout in ipairs { { false, false }, { true, false }, { false, true }, { true, true } } do
      run { dtype = dtype, m = 150, n = 133, k = 72, at = layout[1], bt = layout[2] }
    end
  end
end)

iris.test("odd sizes and strides are staged element by element", function()
  for _, dtype in ipairs(g.dtypes) do
    for _, shape in ipairs { { 1, 1, 1 }, { 7, 9, 5 }, { 129, 3, 33 } } do
      run { dtype = dtype, m = shape[1], n = shape[2], k = shape[3], at = shape[1] == 7 }
    end
  end
end)

iris.test("k split over two calls, the tile stored at an offset, and accumulated atomically", function()
  run { dtype = "float16", m = 100, n = 140, k = 90, split = true, row0 = 3, col0 = 5 }
  run { dtype = "float32", m = 64, n = 200, k = 24, bt = true, row0 = 1, col0 = 2 }
  run { dtype = "bfloat16", m = 130, n = 70, k = 40, atomically = true }
end)

-- Whole 128 x 128 tiles inside the operands take the fast staging path (each thread's chunks worked
-- out once per multiply): every layout and element type, the last step of k partial. Regression: the
-- fast path once placed an m- or n-contiguous float32 tile as if its rows held 16-bit elements.
iris.test("whole tiles in every layout, staged by the fast path", function()
  for _, dtype in ipairs(g.dtypes) do
    for _, layout in ipairs { {}, { at = true }, { bt = true }, { at = true, bt = true } } do
      run { dtype = dtype, m = 136, n = 160, k = 72, at = layout.at, bt = layout.bt }
    end
  end
end)

-- Regression: staging took 16-byte chunks whenever the operand's base and row stride were aligned,
-- whatever the tile's origin; ctx.ops.matmul_reduce_scatter (dim 2, 4 ranks) multiplies at column 38 of
-- a B whose rows are 304 bytes, and a GPU's cp.async silently copied the wrong columns from there.
iris.test("tiles at origins off the operands' 16-byte chunks", function()
  local a_rows, b_cols, k = 136, 152, 40
  for _, dtype in ipairs { "float16", "float32" } do
    local av, bv = g.values(0, a_rows, k, 1), g.values(0, k, b_cols, 2)
    local a, b = ctx:zeros({ k, a_rows }, dtype), ctx:zeros({ k, b_cols }, dtype)
    local at = {}
    for i = 0, a_rows - 1 do for j = 0, k - 1 do at[j * a_rows + i + 1] = av[i * k + j + 1] end end
    g.fill(a, at)
    g.fill(b, bv)
    local full = g.matmul(av, bv, a_rows, b_cols, k)
    for _, origin in ipairs { { 6, 38 }, { 3, 114 }, { 8, 76 } } do
      local row0, col0 = origin[1], origin[2]
      local m, n = a_rows - row0, 38
      local c = ctx:full({ m, n }, -7, "float32")
      mod["window_" .. dtype]:launch({ grid = 2, block = 256 }, a, b, c, m, n, k, a_rows, b_cols, row0, col0)
      local expected = {}
      for i = 0, m - 1 do
        for j = 0, n - 1 do expected[i * n + j + 1] = full[(row0 + i) * b_cols + col0 + j + 1] end
      end
      g.check(ctx, c, expected, ("%s rows from %d, columns from %d"):format(dtype, row0, col0))
    end
  end
end)

iris.test("for_each visits every element of the tile once", function()
  local counts = ctx:zeros(128 * 128, "int32")
  mod.coverage:launch({ grid = 1, block = 256 }, counts)
  iris.assert_equal(counts:min(), 1, "the least visited element")
  iris.assert_equal(counts:max(), 1, "the most visited element")
  -- After a multiply by one: element (0, 0) holds 1 x 1 = 1, where that layout puts it.
  for _, dtype in ipairs(g.dtypes) do
    local one = ctx:full({ 1 }, 1, dtype)
    counts = ctx:zeros(128 * 128, "int32")
    mod["coverage_" .. dtype]:launch({ grid = 1, block = 256 }, one, counts)
    iris.assert_equal(counts:min(), 1, dtype .. ": the least visited element")
    iris.assert_equal(counts:max(), 1, dtype .. ": the most visited element")
  end
end)
