// The cuda backend's own steps for kernels: loading a module (cubin, fatbin or PTX through
// cuModuleLoadDataEx, with the JIT's error log) and encoding tensor maps (TMA descriptors, the operands
// of iris::gemm::tma; cuTensorMapEncodeTiled). Kernel lookup, module variables, launches, events and
// the raw-launch loop are shared with the hip backend (gpu/execution.hpp).
#include <cstring>

#include "iris/impl/abi.h"
#include "runtime/cuda/cuda_backend_impl.hpp"
#include "runtime/gpu/execution.hpp"

namespace iris::runtime {

namespace {

// TMA's element type and size for a dtype (IRIS_DTYPE_*); false for those it has none of (bool, int8,
// int16).
bool tensor_map_type(int dtype, CUtensorMapDataType* type, uint32_t* bytes) {
  switch (dtype) {
    case IRIS_DTYPE_uint8: *type = CU_TENSOR_MAP_DATA_TYPE_UINT8; *bytes = 1; return true;
    case IRIS_DTYPE_int32: *type = CU_TENSOR_MAP_DATA_TYPE_INT32; *bytes = 4; return true;
    case IRIS_DTYPE_uint32: *type = CU_TENSOR_MAP_DATA_TYPE_UINT32; *bytes = 4; return true;
    case IRIS_DTYPE_int64: *type = CU_TENSOR_MAP_DATA_TYPE_INT64; *bytes = 8; return true;
    case IRIS_DTYPE_uint64: *type = CU_TENSOR_MAP_DATA_TYPE_UINT64; *bytes = 8; return true;
    case IRIS_DTYPE_float16: *type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; *bytes = 2; return true;
    case IRIS_DTYPE_bfloat16: *type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; *bytes = 2; return true;
    case IRIS_DTYPE_float32: *type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; *bytes = 4; return true;
    case IRIS_DTYPE_float64: *type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; *bytes = 8; return true;
    default: return false;
  }
}

bool is_binary_image(const std::vector<uint8_t>& code) {
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
  return code.size() >= 4 && (std::memcmp(code.data(), elf, 4) == 0 || std::memcmp(code.data(), fatbin, 4) == 0);
}

}  // namespace

std::unique_ptr<Module> CudaBackend::load_module(const std::vector<uint8_t>& code) {
  throw_if_faulted();
  if (code.empty()) throw Error(Errc::invalid_argument, "loading an empty module: the compiler produced no code");
  bind();
  drain_for_proxy("loading a module");  // (Backend::drain_before_copies)
  // cubin and fatbin load as they are; PTX is text the driver compiles, and must end with a NUL.
  const bool binary = is_binary_image(code);
  std::vector<uint8_t> text;
  const void* image = code.data();
  if (!binary && code.back() != 0) {
    text.reserve(code.size() + 1);
    text.assign(code.begin(), code.end());
    text.push_back(0);
    image = text.data();
  }
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log - 1))};
  CUmodule module = nullptr;
  CUresult result = cu.cuModuleLoadDataEx(&module, image, 2, options, values);
  if (result != CUDA_SUCCESS) {
    const std::string what = format("loading a module (%s, %s) on GPU %d (%s, sm_%d%d)", binary ? "cubin" : "PTX",
                                    human_bytes(code.size()).c_str(), device_, device_name_.c_str(), compute_major_,
                                    compute_minor_);
    if (cuda::is_device_fault(result)) fail(result, "cuModuleLoadDataEx", what, Errc::compile);
    throw Error(Errc::compile, format("%s: cuModuleLoadDataEx returned %s%s%s", what.c_str(),
                                      cuda::error_text(&cu, result).c_str(), log[0] ? "; the driver's log:\n" : "", log));
  }
  return std::make_unique<gpu::LoadedModule<cuda::Api>>(*this, module);
}

// What cuTensorMapEncodeTiled requires is checked first, so a mistake is named rather than reported as
// CUDA_ERROR_INVALID_VALUE.
void CudaBackend::encode_tensor_map(const TensorMapSpec& spec, void* out) const {
  if (compute_major_ < 9) {
    throw Error(Errc::unsupported, format("tensor maps (TMA descriptors, iris::gemm::TensorMap) need compute "
                                          "capability 9.0 or later (an H100 or H200); GPU %d (%s) is sm_%d%d",
                                          device_, device_name_.c_str(), compute_major_, compute_minor_));
  }
  CUtensorMapDataType type;
  uint32_t bytes = 0;
  if (!tensor_map_type(spec.dtype, &type, &bytes)) {
    throw Error(Errc::invalid_argument, "a tensor map's elements are uint8, int32, uint32, int64, uint64, float16, "
                                        "bfloat16, float32 or float64 (TMA has no other types)");
  }
  const auto address = reinterpret_cast<uintptr_t>(spec.base);
  if (address % 16 != 0) {
    throw Error(Errc::invalid_argument, format("a tensor map's matrix must start on a 16-byte boundary; it starts "
                                               "at 0x%llx", static_cast<unsigned long long>(address)));
  }
  if (spec.rows == 0 || spec.cols == 0 || spec.rows > (1ull << 32) || spec.cols > (1ull << 32)) {
    throw Error(Errc::invalid_argument, format("a tensor map's matrix has 1 to 2^32 rows and columns, not %llu x %llu",
                                               static_cast<unsigned long long>(spec.rows),
                                               static_cast<unsigned long long>(spec.cols)));
  }
  if (spec.row_stride < spec.cols || (spec.row_stride * bytes) % 16 != 0 || spec.row_stride * bytes >= (1ull << 40)) {
    throw Error(Errc::invalid_argument,
                format("a tensor map's rows must be a multiple of 16 bytes apart, at least a row's width: %llu "
                       "columns of %u bytes with rows %llu elements apart",
                       static_cast<unsigned long long>(spec.cols), bytes, static_cast<unsigned long long>(spec.row_stride)));
  }
  if (spec.box_rows < 1 || spec.box_rows > 256 || spec.box_cols < 1 || spec.box_cols > 256 ||
      (spec.box_cols * bytes) % 16 != 0 || spec.box_cols * bytes > 128) {
    throw Error(Errc::invalid_argument,
                format("a tensor map's box is 1 to 256 rows of 16 to 128 bytes (a multiple of 16: the 128-byte "
                       "swizzle's width at most), not %u x %u elements of %u bytes",
                       spec.box_rows, spec.box_cols, bytes));
  }
  alignas(64) CUtensorMap map;
  cuuint64_t dims[2] = {spec.cols, spec.rows};
  cuuint64_t strides[1] = {spec.row_stride * bytes};
  cuuint32_t box[2] = {spec.box_cols, spec.box_rows};
  cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = cu.cuTensorMapEncodeTiled(
      &map, type, 2, const_cast<void*>(spec.base), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error(Errc::invalid_argument,
                format("cuTensorMapEncodeTiled returned %s for a %llu x %llu matrix (rows %llu elements apart) in "
                       "boxes of %u x %u",
                       cuda::error_text(&cu, result).c_str(), static_cast<unsigned long long>(spec.rows),
                       static_cast<unsigned long long>(spec.cols), static_cast<unsigned long long>(spec.row_stride),
                       spec.box_rows, spec.box_cols));
  }
  static_assert(sizeof map == sizeof(abi::TensorMapData), "iris_tensor_map is a CUtensorMap");
  std::memcpy(out, &map, sizeof map);
}

}  // namespace iris::runtime
