/* Kernels: compile, look up, launch, time (the Lua side is src/lua/iris/kernel.lua; docs/kernels.md).
 * Handles are owned by the session and stay valid until the job ends. */
#ifndef IRIS_CAPI_KERNELS_H
#define IRIS_CAPI_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
typedef struct iris_program iris_program;
typedef struct iris_kernel iris_kernel;
typedef struct iris_timer iris_timer;
typedef struct iris_graph iris_graph;

/* How Lua passes a parameter (programs::ParamKind). */
enum {
  IRIS_PARAM_POINTER = 0,
  IRIS_PARAM_INTEGER = 1,
  IRIS_PARAM_FLOAT = 2,
  IRIS_PARAM_BOOL = 3,
  IRIS_PARAM_CONTEXT = 4,
  IRIS_PARAM_FLOAT16 = 5,
  IRIS_PARAM_BFLOAT16 = 6,
  IRIS_PARAM_TENSOR_MAP = 7 /* iris::gemm::TensorMap by value: an iris_tensor_map cdata (impl/abi.h) */
};

typedef struct iris_param_info {
  const char* name;  /* "buf" */
  const char* type;  /* as declared, template arguments substituted: "const float*" */
  int kind;          /* IRIS_PARAM_* */
  const char* ctype; /* C type of the argument slot: "int32_t", "double", "void*", "iris_context_data"
                        (iris::Context, declared in the device header's impl/abi.h) */
  const char* dtype; /* pointer: tensor dtype it takes, "" for void*; scalar: its dtype */
  double min, max;   /* integers: the range the type holds */
} iris_param_info;

/* source: the user's code; origin: "pattern.lua:12" (labels); description: "the snippet at
 * pattern.lua:12" (compile errors); file_name: what compiler messages call it. defines: name/value
 * pairs (2 * define_count strings). */
int iris_compile(const char* source, size_t source_len, const char* origin, const char* description,
                 const char* file_name, const char* const* defines, int define_count, const char* const* options,
                 int option_count, iris_program** out);
/* The text of the kernel source file `path`, for iris.compile_file: a regular file of at most 64 MiB
 * (a fifo, a device or a directory is refused without blocking or reading it). *text stays valid until
 * the next call. */
int iris_read_source_file(const char* path, const char** text, size_t* size);
/* One of iris's own kernel files, by its name under kernels/ without ".hip" ("ccl/all_reduce"),
 * compiled like a snippet (same compilers and cache). */
int iris_compile_builtin(const char* name, iris_program** out);
/* The names iris_compile_builtin takes, one a line ("ccl/all_reduce\n..."): the kernel files the binary
 * embeds. Needs no session. */
const char* iris_builtin_names(void);
/* Every kernel of the program with its parameters, a line each ("put_ones(float* buf, int n)\n"); valid
 * until the next call. */
const char* iris_program_signatures(iris_program* program);
/* After a device fault: 1 when the device's report is one of the collectives' call protocol (a mismatch
 * or a rank that never came), with its text, this rank's call number, the other rank's (0 when unknown)
 * and that rank; else 0. The calls' numbers count each rank's ctx.ccl and ctx.ops calls. */
int iris_collective_report(const char** text, int* peer, uint64_t* my_call, uint64_t* their_call);
/* name: "put_ones" or a template instance "scale<float>" (compiled on first request). */
int iris_program_kernel(iris_program* program, const char* name, iris_kernel** out);
const char* iris_kernel_name(const iris_kernel* kernel);  /* canonical: "scale<float, 4>" */
const char* iris_kernel_label(const iris_kernel* kernel); /* "scale<float, 4> (pattern.lua:12)" */
int iris_kernel_param_count(const iris_kernel* kernel);
void iris_kernel_param(const iris_kernel* kernel, int index, iris_param_info* out);
/* dims: grid x, y, z, block x, y, z. args[i] points at the i-th argument's value. Asynchronous. */
int iris_kernel_launch(iris_kernel* kernel, const uint32_t* dims, uint64_t shared_bytes, void** args);
/* Backend::time_raw_launches: the same launch `iterations` times straight through the driver; seconds:
   the device's time (events), host_seconds: the host's time to issue them. */
int iris_kernel_time_raw_launches(iris_kernel* kernel, const uint32_t* dims, uint64_t shared_bytes, void** args,
                                  int iterations, double* seconds, double* host_seconds);

/* A TMA descriptor (iris::gemm::TensorMap; impl/abi.h's iris_tensor_map, 128 bytes on 64) of the
   row-major rows x cols matrix of dtype `dtype` (IRIS_DTYPE_*) at device address `ptr`, rows
   `row_stride` elements apart, boxes of box_rows x box_cols elements, 128-byte swizzle (gemm.hpp lists
   the boxes iris::gemm::tma reads), elements past the matrix read as zeros: into `out`. The cuda
   backend encodes it (cuTensorMapEncodeTiled); the others fail, saying TMA needs an H100 or H200. */
int iris_tensor_map_encode(const void* ptr, int dtype, uint64_t rows, uint64_t cols, uint64_t row_stride,
                           uint32_t box_rows, uint32_t box_cols, void* out);

/* The largest launch the device takes (Backend::launch_limits): grid x, y, z, block x, y, z, and
   threads per block. Fails before iris_init (unless a registry of its own is in place). */
int iris_launch_limits(uint32_t* max_grid, uint32_t* max_block, uint32_t* max_threads_per_block);

/* The device's multiprocessors (SMs, CUs; the cpu backend's threads per rank): ctx:get_cu_count(). */
int iris_device_multiprocessors(uint32_t* count);
/* How many ranks of this node run on this rank's device (1 on the cpu backend): their kernels share
   the multiprocessors. */
int iris_device_sharing(uint32_t* ranks);

/* The second stream (Backend::select_stream; docs/architecture.md), for ctx.ops's variant overlap:
   launches, asynchronous copies and the vendor libraries' work go to stream `which` (0: the main one,
   1: the second) from here on; iris_stream_wait makes stream `waiter` wait, on the device, for what the
   other stream has enqueued so far. Nothing to do on the cpu backend (its launches finish in order). */
int iris_stream_select(int which);
int iris_stream_wait(int waiter);

/* ctx:device_barrier() (asynchronous, like a launch). */
int iris_device_barrier(void);

/* Graphs (ctx:capture; docs/graphs.md), local to this rank (the Lua side makes them collective). From
   iris_capture_begin until iris_capture_end or iris_capture_abort, this rank's launches are recorded,
   not run; operations that wait for the device fail meanwhile. iris_capture_end returns the graph
   (`label` names it: "the graph captured at x.lua:12") and how many kernels it launches. */
int iris_capture_begin(void);
int iris_capture_end(const char* label, iris_graph** out, uint64_t* kernels);
/* Drops what the capture in progress recorded (nothing when there is none). */
void iris_capture_abort(void);
/* Launches the graph `times` times (>= 0), asynchronously like a launch. */
int iris_graph_replay(iris_graph* graph, int64_t times);
int iris_graph_free(iris_graph* graph);

/* Device-event timing (iris.bench): start, stop, milliseconds between them (waits for the stop). */
int iris_timer_create(iris_timer** out);
void iris_timer_destroy(iris_timer* timer);
int iris_timer_start(iris_timer* timer);
int iris_timer_stop(iris_timer* timer, double* milliseconds);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
