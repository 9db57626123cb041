#include "runtime/vendor_libraries.hpp"

#include "core/dynamic_library.hpp"
#include "core/error.hpp"

namespace iris::runtime::vendor {
namespace {

// Binds every entry of a table (IRIS_*_FUNCTIONS) to `api`'s members.
#define IRIS_VENDOR_BIND(member, symbol, result, parameters) library.bind(api.member, symbol);

Nccl load_nccl(const std::string& kind) {
  const bool rccl = kind == "rccl";
  const DynamicLibrary library =
      rccl ? DynamicLibrary::open({"librccl.so.1", "librccl.so"}, "RCCL", "install RCCL (ROCm's rccl package)")
           : DynamicLibrary::open({"libnccl.so.2", "libnccl.so"}, "NCCL", "install NCCL (libnccl2)");
  Nccl api;
  api.library = library.name();
  IRIS_NCCL_FUNCTIONS(IRIS_VENDOR_BIND)
  return api;
}

Cublas load_cublas() {
  const DynamicLibrary library = DynamicLibrary::open({"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
                                                      "cuBLAS", "install the CUDA toolkit's cuBLAS");
  Cublas api;
  api.library = library.name();
  IRIS_CUBLAS_FUNCTIONS(IRIS_VENDOR_BIND)
  const CublasStatus status = api.create(&api.handle);
  if (status != 0) throw Error(Errc::environment, api.library + ": cublasCreate failed with status " + std::to_string(status));
  return api;
}

#undef IRIS_VENDOR_BIND

// nccl.h's ncclDataType_t.
enum NcclType { nccl_int8 = 0, nccl_uint8 = 1, nccl_int32 = 2, nccl_uint32 = 3, nccl_int64 = 4, nccl_uint64 = 5,
                nccl_float16 = 6, nccl_float32 = 7, nccl_float64 = 8, nccl_bfloat16 = 9 };

}  // namespace

const Nccl& nccl(const std::string& kind) {
  static LoadedOnce<Nccl> loaded[2];
  const bool rccl = kind == "rccl";
  return loaded[rccl ? 1 : 0].get([&] { return load_nccl(kind); });
}

const Cublas& cublas() {
  static LoadedOnce<Cublas> loaded;
  return loaded.get(load_cublas);
}

int nccl_type(const std::string& dtype) {
  if (dtype == "int8") return nccl_int8;
  if (dtype == "uint8" || dtype == "bool") return nccl_uint8;
  if (dtype == "int32") return nccl_int32;
  if (dtype == "uint32") return nccl_uint32;
  if (dtype == "int64") return nccl_int64;
  if (dtype == "uint64") return nccl_uint64;
  if (dtype == "float16") return nccl_float16;
  if (dtype == "float32") return nccl_float32;
  if (dtype == "float64") return nccl_float64;
  if (dtype == "bfloat16") return nccl_bfloat16;
  throw Error(Errc::invalid_argument, "NCCL has no " + dtype + " type");
}

int nccl_op(const std::string& op) {
  if (op == "sum") return 0;
  if (op == "prod") return 1;
  if (op == "max") return 2;
  if (op == "min") return 3;
  throw Error(Errc::invalid_argument, "NCCL has no " + op + " reduction");
}

}  // namespace iris::runtime::vendor
