// The reference collectives and GEMM of the benchmarks (capi_reference.h): NCCL/RCCL and cuBLAS as
// runtime::vendor loads them, MPI through comm::MpiCollectives. Mechanism only: which one a bench uses is
// its own policy.
#include "capi/capi_reference.h"

#include <cstring>
#include <memory>
#include <string>

#include "capi/guard.hpp"
#include "comm/comm.hpp"
#include "comm/mpi_collectives.hpp"
#include "core/error.hpp"
#include "heap/element_types.hpp"
#include "runtime/vendor_libraries.hpp"
#include "session/session.hpp"

using namespace iris;
using runtime::vendor::Nccl;
using runtime::vendor::NcclComm;
using runtime::vendor::NcclResult;
using runtime::vendor::NcclUniqueId;
using runtime::vendor::nccl_op;
using runtime::vendor::nccl_type;

struct iris_reference {
  std::string kind;
  const Nccl* nccl = nullptr;
  NcclComm nccl_comm = nullptr;
  std::unique_ptr<comm::MpiCollectives> mpi;
  int size = 1;

  void check(NcclResult result, const char* call) const {
    if (result != 0) throw Error(Errc::environment, kind + " " + call + ": " + nccl->error_string(result));
  }
};

namespace {

// The process's cuBLAS, where this session's backend has it; else the error saying why not.
const runtime::vendor::Cublas& session_cublas() {
  if (!session::initialized()) throw Error(Errc::invalid_argument, "call iris.init() first");
  const std::string backend = session::current().backend->name();
  if (backend != "cuda") throw Error(Errc::environment, "no vendor GEMM on the " + backend + " backend (cuBLAS only)");
  return runtime::vendor::cublas();
}

}  // namespace

extern "C" {

int iris_reference_unique_id(const char* kind, uint8_t* id, size_t bytes) {
  return capi::guarded([&] {
    const Nccl& api = runtime::vendor::nccl(kind);
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
      ref->mpi = std::make_unique<comm::MpiCollectives>(comm);
    } else {
      ref->nccl = &runtime::vendor::nccl(ref->kind);
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
      const Nccl& api = *ref->nccl;
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
    for (int i = 0; i < iterations; ++i) ref->mpi->run(collective, send, recv, count, dtype, op, root);
  });
}

void iris_reference_close(iris_reference* ref) {
  if (ref == nullptr) return;
  if (ref->nccl_comm != nullptr) ref->nccl->comm_destroy(ref->nccl_comm);
  delete ref;  // (and its MPI communicator)
}

int iris_reference_gemm_available(void) {
  return capi::guarded([&] { (void)session_cublas(); });
}

int iris_reference_gemm(const char* dtype_name, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                        const void* b, int64_t ldb, float beta, void* c, int64_t ldc, int iterations) {
  return capi::guarded([&] {
    const runtime::vendor::Cublas& api = session_cublas();
    using namespace runtime::vendor;
    const std::string dtype = dtype_name;
    int type = cuda_r_32f, compute = cublas_compute_32f_fast_tf32;
    if (dtype == "float16" || dtype == "bfloat16") {
      type = dtype == "float16" ? cuda_r_16f : cuda_r_16bf;
      compute = cublas_compute_32f;
    } else if (dtype != "float32") {
      throw Error(Errc::invalid_argument, "cuBLAS GEMM of " + dtype + ": float16, bfloat16 or float32 only");
    }
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
