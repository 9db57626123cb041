/* The one boundary between the C++ core and the Lua module.
 *
 * Every function the Lua side calls is declared in a header of this folder, between the cdef markers;
 * the build turns those declarations into the Lua module iris.cdef (cmake/IrisCdef.cmake), so the C and
 * Lua views cannot drift apart. Conventions (as lua-resty-core's):
 *   - names start with iris_;
 *   - a function that can fail returns int: 0 on success, -1 on failure, with the message in
 *     iris_last_error() and its kind ("heap_exhausted", "environment", ...) in iris_last_error_kind();
 *   - Lua raises the error at the caller's line (src/lua/iris/errors.lua).
 * Bump IRIS_ABI_VERSION when a declaration changes; the Lua side refuses a host of another version.
 *
 * This header holds the process-level functions; the others are capi_heap.h, capi_kernel.h, ...
 */
#ifndef IRIS_CAPI_H
#define IRIS_CAPI_H

#include <stddef.h>
#include <stdint.h>

#define IRIS_ABI_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
int iris_abi_version(void);
const char* iris_version(void);
const char* iris_last_error(void);
const char* iris_last_error_kind(void);
/* Raises nothing: records a Lua-side error kind/message so C++ callers see the same vocabulary. */
void iris_set_last_error(const char* kind, const char* message);

int iris_rank(void);
int iris_world_size(void);
int iris_local_rank(void);
int iris_local_size(void);

/* level: 0 debug, 1 info, 2 warning, 3 error */
int iris_log_enabled(int level);
void iris_log(int level, const char* message);

int iris_parse_byte_size(const char* text, const char* what, uint64_t* out);
/* Host collectives for the Lua side: announce() catches divergent calls (see src/comm/comm.hpp). */
int iris_announce(const char* op, uint64_t arg, uint64_t* args_of_all_ranks);
int iris_broadcast_bytes(void* data, size_t bytes, int root);
/* Collective: continue on fresh communicators after Ctrl-C left collectives out of step (the REPL). */
int iris_comm_renew(void);
/* Local: while `reason` is not NULL or "", this rank runs code the others do not (the REPL's :on R), and
   every collective fails at once naming the reason. */
void iris_comm_run_alone(const char* reason);
/* Steady clock in seconds, for timing on the host. */
double iris_wall_time(void);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
