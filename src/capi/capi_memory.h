/* The C API of the session, the symmetric heap and tensor memory (conventions: iris_capi.h).
 *
 * Mechanism only: the Lua side (iris.context, iris.tensor) decides defaults, checks arguments and
 * words the messages; these functions allocate, copy, fill and exchange. Device addresses are
 * `void*` in this process's view (on the cpu backend they are host addresses too; see
 * iris_host_addressable). Every copy or fill is ordered after launched work and complete on return.
 */
#ifndef IRIS_CAPI_MEMORY_H
#define IRIS_CAPI_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
/* Collective. backend "", heap_bytes 0 and node_size 0 mean "not given": IRIS_BACKEND / IRIS_HEAP_SIZE /
   IRIS_NODE_SIZE, then the defaults. After the first call the session exists and later calls change
   nothing. */
int iris_init(const char* backend, uint64_t heap_bytes, int node_size);
int iris_initialized(void);
/* "cuda, hip, cpu or auto": the backends iris_init takes, for messages. */
const char* iris_backend_names(void);
/* The session's facts; "" / 0 before iris_init. */
const char* iris_backend_name(void);
const char* iris_device_name(void);
/* What this rank's kernels are compiled for: "sm_90a" (an H100 or H200), "gfx90a", "x86_64" (cpu). */
const char* iris_device_arch(void);
int iris_device_ordinal(void);
uint64_t iris_heap_size(void);
/* Where this rank sees `rank`'s heap (a device address); NULL before iris_init or for a bad rank. */
void* iris_heap_base(int rank);
/* The nodes (docs/multinode.md): `rank`'s node and its position there; -1 before iris_init or for a bad
   rank. iris_nodes: how many (1 before iris_init). */
int iris_node_of(int rank);
int iris_local_rank_of(int rank);
int iris_nodes(void);
/* Collective between this rank and `peer`, on another node: `rounds` MPI ping-pongs of 8 bytes over the
   transport; *seconds = the median round trip. */
int iris_transport_ping_pong(int peer, int rounds, double* seconds);
/* Collective between this rank and `peer`, on another node: `rounds` blocking MPI sends of `bytes` from
   host memory to the peer's host memory (sender != 0 on the rank that sends), each answered by 8 bytes;
   *seconds = the sender's median: what the messages transport itself moves, host to host. */
int iris_transport_bulk_send(int peer, uint64_t bytes, int rounds, int sender, double* seconds);
/* How this rank reaches other nodes ("MPI one-sided, osc rdma", "MPI messages to the target's proxy,
   staged through host memory"); "" in a job on one node. */
const char* iris_transport_name(void);
/* 1 when the host may dereference device addresses itself (cpu backend). */
int iris_host_addressable(void);

/* Collective: every rank, same order, same bytes and `tensor` (its dtype and shape as text,
   "float32 {2, 3}", compared across ranks); `op` names the call ("ctx:zeros()"). Exchanges
   queued releases, then allocates; with zero != 0 it zeroes the block and returns only once every
   rank has (without, a caller writing contents calls iris_barrier(op) after writing them).
   *offset = UINT64_MAX when the request fits nowhere (then on every rank alike); with
   last_attempt != 0 that is a heap_exhausted error instead. */
int iris_heap_allocate(const char* op, const char* tensor, uint64_t bytes, int zero, int last_attempt, uint64_t* offset);
/* Local, never collective (safe in a finalizer): queues the block for the next exchange. */
int iris_heap_release(uint64_t offset);
/* Allocator state (identical on every rank after each allocation); any pointer may be NULL. */
int iris_heap_stats(uint64_t* free_bytes, uint64_t* largest_free, uint64_t* allocated_bytes,
                    uint64_t* allocated_blocks, uint64_t* pending_releases, uint64_t* awaiting_other_ranks);

/* Finishes this rank's device work. */
int iris_synchronize(void);
/* Finishes this rank's device work, then waits for every rank (announcing `op`). */
int iris_barrier(const char* op);

/* Copies and fills take addresses of ranks on other nodes too (iris_heap_base of such a rank is no
   address but a tag the transport decodes): they go through the host proxy's transport. */
int iris_copy_to_host(void* host, const void* device, uint64_t bytes);
int iris_copy_from_host(void* device, const void* host, uint64_t bytes);
/* Device to device, also between this rank's heap and a peer's (through iris_heap_base). */
int iris_copy_device(void* dst, const void* src, uint64_t bytes);
/* The same enqueued on the backend's stream after the launches before it, not waited for (ctx.ccl's
 * variant copy_engine); this node's heaps only. */
int iris_copy_device_async(void* dst, const void* src, uint64_t bytes);
/* `count` copies of a pattern of 1, 2, 4 or 8 bytes. */
int iris_fill(void* device, const void* pattern, int pattern_bytes, uint64_t count);

/* "1.5 GiB", "256 B": sizes as messages word them (valid until the next call). */
const char* iris_human_bytes(uint64_t bytes);

/* Host scratch memory for staging (NULL when out of memory); free with iris_host_free. */
void* iris_host_alloc(uint64_t bytes);
void iris_host_free(void* memory);

/* 16-bit floats: round to nearest even, overflow to infinity. */
uint16_t iris_float16_from_double(double value);
double iris_float16_to_double(uint16_t bits);
uint16_t iris_bfloat16_from_double(double value);
double iris_bfloat16_to_double(uint16_t bits);

/* Fills `count` elements of `dtype` at `device` with random numbers. distribution: 0 uniform [a, b),
   1 normal (mean a, std b), 2 integers in [a, b). The stream is (seed, stream, counter). */
int iris_fill_random(void* device, const char* dtype, uint64_t count, int distribution, double a, double b,
                     uint64_t seed, uint64_t stream, uint64_t counter);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
