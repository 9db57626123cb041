// The vendor libraries iris's benchmarks compare with (iris_reference_*, capi_reference.h): NCCL and
// RCCL (one API), cuBLAS. Opened at run time through DynamicLibrary, so iris-lua links none of them and
// starts where they are missing; each is loaded once per process, and a failure to load is remembered
// and thrown again (Error(environment)) on every later use.
//
// Each library's entry points are one X-macro table: X(member, symbol, result, (parameters)), the
// prototype written from the vendor's header (which the build does not need). To call another entry
// point, add its line to the table and call api.member(...): loading binds every line, and says which
// symbol a library lacks.
#pragma once

#include <cstddef>
#include <string>

namespace iris::runtime::vendor {

// ---- NCCL and RCCL --------------------------------------------------------------------------------
// nccl.h's types and values, as stable as its ABI (NCCL 2.x; RCCL keeps them).
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;
using NcclResult = int;  // 0: ncclSuccess
using NcclStream = void*;  // cudaStream_t, hipStream_t

#define IRIS_NCCL_FUNCTIONS(X)                                                                             \
  X(get_unique_id, "ncclGetUniqueId", NcclResult, (NcclUniqueId*))                                        \
  X(comm_init_rank, "ncclCommInitRank", NcclResult, (NcclComm*, int, NcclUniqueId, int))                  \
  X(comm_destroy, "ncclCommDestroy", NcclResult, (NcclComm))                                              \
  X(all_reduce, "ncclAllReduce", NcclResult, (const void*, void*, size_t, int, int, NcclComm, NcclStream)) \
  X(all_gather, "ncclAllGather", NcclResult, (const void*, void*, size_t, int, NcclComm, NcclStream))     \
  X(reduce_scatter, "ncclReduceScatter", NcclResult,                                                      \
    (const void*, void*, size_t, int, int, NcclComm, NcclStream))                                         \
  X(broadcast, "ncclBroadcast", NcclResult, (const void*, void*, size_t, int, int, NcclComm, NcclStream)) \
  X(reduce, "ncclReduce", NcclResult, (const void*, void*, size_t, int, int, int, NcclComm, NcclStream)) \
  X(send, "ncclSend", NcclResult, (const void*, size_t, int, int, NcclComm, NcclStream))                  \
  X(recv, "ncclRecv", NcclResult, (void*, size_t, int, int, NcclComm, NcclStream))                        \
  X(group_start, "ncclGroupStart", NcclResult, ())                                                        \
  X(group_end, "ncclGroupEnd", NcclResult, ())                                                            \
  X(error_string, "ncclGetErrorString", const char*, (NcclResult))

struct Nccl {
#define IRIS_VENDOR_MEMBER(member, symbol, result, parameters) result(*member) parameters = nullptr;
  IRIS_NCCL_FUNCTIONS(IRIS_VENDOR_MEMBER)
  std::string library;  // the name it was opened under: "libnccl.so.2"
};

// The process's NCCL (kind "nccl") or RCCL ("rccl").
const Nccl& nccl(const std::string& kind);
// ncclDataType_t of a dtype name (bool as uint8); ncclRedOp_t of "sum", "prod", "max", "min". Throw
// Error(invalid_argument) for what NCCL has not.
int nccl_type(const std::string& dtype);
int nccl_op(const std::string& op);

// ---- cuBLAS ---------------------------------------------------------------------------------------
// cublas_api.h's and library_types.h's values (stable across cuBLAS 11-13).
enum CublasValue { cublas_op_n = 0, cuda_r_32f = 0, cuda_r_16f = 2, cuda_r_16bf = 14, cublas_compute_32f = 68,
                   cublas_compute_32f_fast_tf32 = 77, cublas_gemm_default = -1 };
using CublasHandle = void*;
using CublasStatus = int;  // 0: CUBLAS_STATUS_SUCCESS

#define IRIS_CUBLAS_FUNCTIONS(X)                                                                          \
  X(create, "cublasCreate_v2", CublasStatus, (CublasHandle*))                                             \
  X(set_stream, "cublasSetStream_v2", CublasStatus, (CublasHandle, void*))                                \
  X(gemm_ex, "cublasGemmEx", CublasStatus,                                                               \
    (CublasHandle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,   \
     const void*, void*, int, int, int, int))

struct Cublas {
  IRIS_CUBLAS_FUNCTIONS(IRIS_VENDOR_MEMBER)
  std::string library;
  CublasHandle handle = nullptr;  // the process's, made at load (cublasCreate)
};
#undef IRIS_VENDOR_MEMBER

// The process's cuBLAS, with its handle.
const Cublas& cublas();

}  // namespace iris::runtime::vendor
