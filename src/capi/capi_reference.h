/* The library collectives are measured against in the same run (scripts/bench/ccl_bench.lua): NCCL on
 * the cuda backend and RCCL on hip, loaded at run time and run on the backend's own stream, or MPI on
 * the cpu backend, over every rank. Mechanism only: which one to use, and what to do when it is not
 * there, is the bench's policy (docs/perf.md). */
#ifndef IRIS_CAPI_REFERENCE_H
#define IRIS_CAPI_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
typedef struct iris_reference iris_reference;
/* NCCL and RCCL: the unique id of a new communicator (`bytes` is 128), made on one rank and handed to
 * every rank's iris_reference_open. kind: "nccl" or "rccl". */
int iris_reference_unique_id(const char* kind, uint8_t* id, size_t bytes);
/* Collective over every rank: opens `kind` ("nccl", "rccl" or "mpi"; `id` is ignored for mpi). The
 * error says why the library is missing or refused (NCCL refuses two ranks on one GPU). */
int iris_reference_open(const char* kind, const uint8_t* id, size_t id_bytes, iris_reference** out);
/* Runs `collective` ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
 * "gather", "scatter", "send_recv": a ring, to the next rank and from the previous one)
 * `iterations` times back to back: enqueued on the backend's stream (NCCL, RCCL) or done (MPI). `count`
 * is per rank as each library counts it: all_reduce and broadcast the elements, all_gather those sent,
 * reduce_scatter those received, all_to_all those sent to each rank. `send` may be `recv` (in place). */
int iris_reference_run(iris_reference* ref, const char* collective, const void* send, void* recv, uint64_t count,
                       const char* dtype, const char* op, int root, int iterations);
void iris_reference_close(iris_reference* ref);
/* The vendor GEMM (cuBLAS, loaded at run time, on the cuda backend's stream), `iterations` times: c =
 * a b + beta c for row-major a (m x k), b (k x n), c (m x n) with leading dimensions lda, ldb, ldc, float32
 * accumulation (tf32 inputs for float32, as iris::gemm). dtype: "float16", "bfloat16" or "float32". The
 * error says why cuBLAS is absent; other backends have none (an error saying so). */
int iris_reference_gemm(const char* dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
                        int64_t ldb, float beta, void* c, int64_t ldc, int iterations);
/* 0 when iris_reference_gemm runs here (the cuda backend, cuBLAS loaded; ctx.ops's variant overlap asks
 * once), else the error saying why not. */
int iris_reference_gemm_available(void);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif /* IRIS_CAPI_REFERENCE_H */
