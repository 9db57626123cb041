#include "runtime/vendor_libraries.hpp"

#include <utility>

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
  // nccl.h's ncclDataType_t values.
  const std::pair<const char*, int> types[] = {{"int8", 0},    {"uint8", 1},   {"bool", 1},    {"int32", 2},
                                               {"uint32", 3},  {"int64", 4},   {"uint64", 5},  {"float16", 6},
                                               {"float32", 7}, {"float64", 8}, {"bfloat16", 9}};
  for (const auto& [name, type] : types) if (dtype == name) return type;
  throw Error(Errc::invalid_argument, "NCCL has no " + dtype + " type");
}

int nccl_op(const std::string& op) {
  const char* ops[] = {"sum", "prod", "max", "min"};  // ncclRedOp_t's order
  for (int i = 0; i < 4; ++i) if (op == ops[i]) return i;
  throw Error(Errc::invalid_argument, "NCCL has no " + op + " reduction");
}

}  // namespace iris::runtime::vendor
