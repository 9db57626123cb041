// The reference collectives of the collectives benchmark (capi_reference.h): NCCL/RCCL through
// dlopen (their API is the same; iris-lua links neither), MPI through the library iris-lua links.
#include "capi/capi_reference.h"

#include <dlfcn.h>
#include <mpi.h>

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "capi/guard.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "heap/element_types.hpp"
#include "session/session.hpp"

using namespace iris;

namespace {

// ---- NCCL and RCCL -----------------------------------------------------------------------------------

// nccl.h's types and values, as stable as its ABI (NCCL 2.x; RCCL keeps them).
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;
using NcclResult = int;
enum NcclType { nccl_int8 = 0, nccl_uint8 = 1, nccl_int32 = 2, nccl_uint32 = 3, nccl_int64 = 4, nccl_uint64 = 5,
                nccl_float16 = 6, nccl_float32 = 7, nccl_float64 = 8, nccl_bfloat16 = 9 };

struct NcclApi {
  NcclResult (*get_unique_id)(NcclUniqueId*);
  NcclResult (*comm_init_rank)(NcclComm*, int, NcclUniqueId, int);
  NcclResult (*comm_destroy)(NcclComm);
  NcclResult (*all_reduce)(const void*, void*, size_t, int, int, NcclComm, void*);
  NcclResult (*all_gather)(const void*, void*, size_t, int, NcclComm, void*);
  NcclResult (*reduce_scatter)(const void*, void*, size_t, int, int, NcclComm, void*);
  NcclResult (*broadcast)(const void*, void*, size_t, int, int, NcclComm, void*);
  NcclResult (*reduce)(const void*, void*, size_t, int, int, int, NcclComm, void*);
  NcclResult (*send)(const void*, size_t, int, int, NcclComm, void*);
  NcclResult (*recv)(void*, size_t, int, int, NcclComm, void*);
  NcclResult (*group_start)();
  NcclResult (*group_end)();
  const char* (*error_string)(NcclResult);
  std::string library;
};

const NcclApi& load_nccl(const std::string& kind) {
  static NcclApi apis[2];
  static bool loaded[2] = {false, false};
  const int which = kind == "rccl" ? 1 : 0;
  NcclApi& api = apis[which];
  if (loaded[which]) return api;
  const std::vector<std::string> names = which == 1 ? std::vector<std::string>{"librccl.so.1", "librccl.so"}
                                                    : std::vector<std::string>{"libnccl.so.2", "libnccl.so"};
  void* handle = nullptr;
  std::string tried;
  for (const std::string& name : names) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      api.library = name;
      break;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : ", ") + name + " (" + (why ? why : "not found") + ")";
  }
  if (handle == nullptr) throw Error(Errc::environment, "cannot load " + kind + ": tried " + tried);
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, symbol));
    if (fn == nullptr) throw Error(Errc::environment, api.library + " has no " + symbol);
  };
  bind(api.get_unique_id, "ncclGetUniqueId");
  bind(api.comm_init_rank, "ncclCommInitRank");
  bind(api.comm_destroy, "ncclCommDestroy");
  bind(api.all_reduce, "ncclAllReduce");
  bind(api.all_gather, "ncclAllGather");
  bind(api.reduce_scatter, "ncclReduceScatter");
  bind(api.broadcast, "ncclBroadcast");
  bind(api.reduce, "ncclReduce");
  bind(api.send, "ncclSend");
  bind(api.recv, "ncclRecv");
  bind(api.group_start, "ncclGroupStart");
  bind(api.group_end, "ncclGroupEnd");
  bind(api.error_string, "ncclGetErrorString");
  loaded[which] = true;
  return api;
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

// ---- MPI ------------------------------------------------------------------------------------------------

MPI_Datatype mpi_type(const std::string& dtype) {
  if (dtype == "bool" || dtype == "uint8") return MPI_UINT8_T;
  if (dtype == "int8") return MPI_INT8_T;
  if (dtype == "int16") return MPI_INT16_T;
  if (dtype == "int32") return MPI_INT32_T;
  if (dtype == "uint32") return MPI_UINT32_T;
  if (dtype == "int64") return MPI_INT64_T;
  if (dtype == "uint64") return MPI_UINT64_T;
  if (dtype == "float32") return MPI_FLOAT;
  if (dtype == "float64") return MPI_DOUBLE;
  throw Error(Errc::invalid_argument, "MPI has no " + dtype + " type");
}

MPI_Op mpi_op(const std::string& op) {
  if (op == "sum") return MPI_SUM;
  if (op == "prod") return MPI_PROD;
  if (op == "min") return MPI_MIN;
  if (op == "max") return MPI_MAX;
  if (op == "band") return MPI_BAND;
  if (op == "bor") return MPI_BOR;
  if (op == "bxor") return MPI_BXOR;
  throw Error(Errc::invalid_argument, "MPI has no " + op + " reduction");
}

void check_mpi(int result, const char* call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw Error(Errc::internal, std::string(call) + " failed: " + std::string(text, length));
}

// ---- cuBLAS ---------------------------------------------------------------------------------------------

// cublas_api.h's and library_types.h's values (stable across cuBLAS 11-13).
enum CublasValue { cublas_op_n = 0, cuda_r_32f = 0, cuda_r_16f = 2, cuda_r_16bf = 14, cublas_compute_32f = 68,
                   cublas_compute_32f_fast_tf32 = 77, cublas_gemm_default = -1 };

struct Cublas {
  void* handle = nullptr;
  int (*set_stream)(void*, void*);
  int (*gemm_ex)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                 const void*, void*, int, int, int, int);
  std::string library;
};

const Cublas& load_cublas() {
  static Cublas api;
  static std::string failure;
  static bool tried = false;
  if (tried) {
    if (api.handle == nullptr) throw Error(Errc::environment, failure);
    return api;
  }
  tried = true;
  void* library = nullptr;
  std::string attempts;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) {
      api.library = name;
      break;
    }
    const char* why = dlerror();
    attempts += (attempts.empty() ? "" : ", ") + std::string(name) + " (" + (why ? why : "not found") + ")";
  }
  failure = "cannot load cuBLAS: tried " + attempts;
  if (library == nullptr) throw Error(Errc::environment, failure);
  auto create = reinterpret_cast<int (*)(void**)>(dlsym(library, "cublasCreate_v2"));
  api.set_stream = reinterpret_cast<decltype(api.set_stream)>(dlsym(library, "cublasSetStream_v2"));
  api.gemm_ex = reinterpret_cast<decltype(api.gemm_ex)>(dlsym(library, "cublasGemmEx"));
  failure = api.library + " lacks cublasCreate_v2, cublasSetStream_v2 or cublasGemmEx";
  if (create == nullptr || api.set_stream == nullptr || api.gemm_ex == nullptr) throw Error(Errc::environment, failure);
  void* handle = nullptr;
  const int status = create(&handle);
  failure = api.library + ": cublasCreate failed with status " + std::to_string(status);
  if (status != 0) throw Error(Errc::environment, failure);
  api.handle = handle;
  return api;
}

}  // namespace

struct iris_reference {
  std::string kind;
  const NcclApi* nccl = nullptr;
  NcclComm nccl_comm = nullptr;
  MPI_Comm mpi_comm = MPI_COMM_NULL;
  int size = 1;

  void check(NcclResult result, const char* call) const {
    if (result != 0) throw Error(Errc::environment, kind + " " + call + ": " + nccl->error_string(result));
  }
};

extern "C" {

int iris_reference_unique_id(const char* kind, uint8_t* id, size_t bytes) {
  return capi::guarded([&] {
    const NcclApi& api = load_nccl(kind);
    NcclUniqueId unique;
    if (bytes != sizeof unique) throw Error(Errc::invalid_argument, "a unique id has 128 bytes");
    const NcclResult result = api.get_unique_id(&unique);
    if (result != 0) throw Error(Errc::environment, std::string(kind) + " ncclGetUniqueId: " + api.error_string(result));
    std::memcpy(id, &unique, sizeof unique);
  });
}

int iris_reference_open(const char* kind, const uint8_t* id, size_t id_bytes, iris_reference** out) {
  return capi::guarded([&] {
    if (!session::initialized()) throw Error(Errc::invalid_argument, "call iris.init() first");
    auto ref = std::make_unique<iris_reference>();
    ref->kind = kind;
    comm::Comm& comm = session::comm();
    ref->size = comm.size();
    if (ref->kind == "mpi") {
      if (!comm.is_mpi()) throw Error(Errc::environment, "MPI is not running (one rank without mpirun)");
      check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &ref->mpi_comm), "MPI_Comm_dup");
    } else {
      ref->nccl = &load_nccl(ref->kind);
      NcclUniqueId unique;
      if (id_bytes != sizeof unique) throw Error(Errc::invalid_argument, "a unique id has 128 bytes");
      std::memcpy(&unique, id, sizeof unique);
      ref->check(ref->nccl->comm_init_rank(&ref->nccl_comm, comm.size(), unique, comm.rank()), "ncclCommInitRank");
    }
    *out = ref.release();
  });
}

int iris_reference_run(iris_reference* ref, const char* collective_name, const void* send, void* recv, uint64_t count,
                       const char* dtype_name, const char* op_name, int root, int iterations) {
  return capi::guarded([&] {
    const std::string collective = collective_name, dtype = dtype_name, op = op_name;
    if (ref->nccl != nullptr) {
      const NcclApi& api = *ref->nccl;
      void* stream = session::current().backend->native_stream();
      const int type = nccl_type(dtype);
      const size_t element = heap::element_size(heap::element_type_named(dtype));
      for (int i = 0; i < iterations; ++i) {
        if (collective == "all_reduce") {
          ref->check(api.all_reduce(send, recv, count, type, nccl_op(op), ref->nccl_comm, stream), "ncclAllReduce");
        } else if (collective == "all_gather") {
          ref->check(api.all_gather(send, recv, count, type, ref->nccl_comm, stream), "ncclAllGather");
        } else if (collective == "reduce_scatter") {
          ref->check(api.reduce_scatter(send, recv, count, type, nccl_op(op), ref->nccl_comm, stream),
                     "ncclReduceScatter");
        } else if (collective == "broadcast") {
          ref->check(api.broadcast(send, recv, count, type, root, ref->nccl_comm, stream), "ncclBroadcast");
        } else if (collective == "reduce") {
          ref->check(api.reduce(send, recv, count, type, nccl_op(op), root, ref->nccl_comm, stream), "ncclReduce");
        } else if (collective == "gather" || collective == "scatter") {  // as nccl-tests: sends and receives
          const bool gather = collective == "gather";
          const int me = session::comm().rank();
          ref->check(api.group_start(), "ncclGroupStart");
          if (me == root) {
            for (int peer = 0; peer < ref->size; ++peer) {
              const size_t at = static_cast<size_t>(peer) * count * element;
              if (gather) {
                ref->check(api.recv(static_cast<char*>(recv) + at, count, type, peer, ref->nccl_comm, stream), "ncclRecv");
              } else {
                ref->check(api.send(static_cast<const char*>(send) + at, count, type, peer, ref->nccl_comm, stream),
                           "ncclSend");
              }
            }
          }
          if (gather) {
            ref->check(api.send(send, count, type, root, ref->nccl_comm, stream), "ncclSend");
          } else {
            ref->check(api.recv(recv, count, type, root, ref->nccl_comm, stream), "ncclRecv");
          }
          ref->check(api.group_end(), "ncclGroupEnd");
        } else if (collective == "send_recv") {  // a ring: to the next rank, from the previous one
          const int me = session::comm().rank();
          ref->check(api.group_start(), "ncclGroupStart");
          ref->check(api.send(send, count, type, (me + 1) % ref->size, ref->nccl_comm, stream), "ncclSend");
          ref->check(api.recv(recv, count, type, (me + ref->size - 1) % ref->size, ref->nccl_comm, stream), "ncclRecv");
          ref->check(api.group_end(), "ncclGroupEnd");
        } else if (collective == "all_to_all") {  // as nccl-tests does it: a send and a receive per rank
          ref->check(api.group_start(), "ncclGroupStart");
          for (int peer = 0; peer < ref->size; ++peer) {
            const size_t at = static_cast<size_t>(peer) * count * element;
            ref->check(api.send(static_cast<const char*>(send) + at, count, type, peer, ref->nccl_comm, stream),
                       "ncclSend");
            ref->check(api.recv(static_cast<char*>(recv) + at, count, type, peer, ref->nccl_comm, stream),
                       "ncclRecv");
          }
          ref->check(api.group_end(), "ncclGroupEnd");
        } else {
          throw Error(Errc::invalid_argument, "no reference for collective '" + collective + "'");
        }
      }
      return;
    }
    const MPI_Datatype type = mpi_type(dtype);
    const int n = static_cast<int>(count);
    const void* in = send == recv ? MPI_IN_PLACE : send;
    for (int i = 0; i < iterations; ++i) {
      if (collective == "all_reduce") {
        check_mpi(MPI_Allreduce(in, recv, n, type, mpi_op(op), ref->mpi_comm), "MPI_Allreduce");
      } else if (collective == "all_gather") {
        check_mpi(MPI_Allgather(send, n, type, recv, n, type, ref->mpi_comm), "MPI_Allgather");
      } else if (collective == "reduce_scatter") {
        check_mpi(MPI_Reduce_scatter_block(send, recv, n, type, mpi_op(op), ref->mpi_comm), "MPI_Reduce_scatter_block");
      } else if (collective == "all_to_all") {
        check_mpi(MPI_Alltoall(send, n, type, recv, n, type, ref->mpi_comm), "MPI_Alltoall");
      } else if (collective == "broadcast") {
        check_mpi(MPI_Bcast(recv, n, type, root, ref->mpi_comm), "MPI_Bcast");
      } else if (collective == "reduce") {
        check_mpi(MPI_Reduce(in, recv, n, type, mpi_op(op), root, ref->mpi_comm), "MPI_Reduce");
      } else if (collective == "gather") {
        check_mpi(MPI_Gather(send, n, type, recv, n, type, root, ref->mpi_comm), "MPI_Gather");
      } else if (collective == "scatter") {
        check_mpi(MPI_Scatter(send, n, type, recv, n, type, root, ref->mpi_comm), "MPI_Scatter");
      } else if (collective == "send_recv") {
        int me = 0, size = 1;
        MPI_Comm_rank(ref->mpi_comm, &me);
        MPI_Comm_size(ref->mpi_comm, &size);
        check_mpi(MPI_Sendrecv(send, n, type, (me + 1) % size, 0, recv, n, type, (me + size - 1) % size, 0, ref->mpi_comm,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
      } else {
        throw Error(Errc::invalid_argument, "no reference for collective '" + collective + "'");
      }
    }
  });
}

void iris_reference_close(iris_reference* ref) {
  if (ref == nullptr) return;
  if (ref->nccl_comm != nullptr) ref->nccl->comm_destroy(ref->nccl_comm);
  if (ref->mpi_comm != MPI_COMM_NULL) MPI_Comm_free(&ref->mpi_comm);
  delete ref;
}

int iris_reference_gemm(const char* dtype_name, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                        const void* b, int64_t ldb, float beta, void* c, int64_t ldc, int iterations) {
  return capi::guarded([&] {
    if (!session::initialized()) throw Error(Errc::invalid_argument, "call iris.init() first");
    const std::string backend = session::current().backend->name();
    if (backend != "cuda") throw Error(Errc::environment, "no vendor GEMM on the " + backend + " backend (cuBLAS only)");
    const std::string dtype = dtype_name;
    int type = cuda_r_32f, compute = cublas_compute_32f_fast_tf32;
    if (dtype == "float16" || dtype == "bfloat16") {
      type = dtype == "float16" ? cuda_r_16f : cuda_r_16bf;
      compute = cublas_compute_32f;
    } else if (dtype != "float32") {
      throw Error(Errc::invalid_argument, "cuBLAS GEMM of " + dtype + ": float16, bfloat16 or float32 only");
    }
    const Cublas& api = load_cublas();
    int status = api.set_stream(api.handle, session::current().backend->native_stream());
    if (status != 0) throw Error(Errc::environment, "cublasSetStream failed with status " + std::to_string(status));
    const float alpha = 1.0f;
    // Row-major C = A B is column-major C^T = B^T A^T: the operands swap, nothing is transposed.
    for (int i = 0; i < iterations; ++i) {
      status = api.gemm_ex(api.handle, cublas_op_n, cublas_op_n, static_cast<int>(n), static_cast<int>(m),
                           static_cast<int>(k), &alpha, b, type, static_cast<int>(ldb), a, type, static_cast<int>(lda),
                           &beta, c, type, static_cast<int>(ldc), compute, cublas_gemm_default);
      if (status != 0) throw Error(Errc::environment, "cublasGemmEx failed with status " + std::to_string(status));
    }
  });
}

}  // extern "C"
