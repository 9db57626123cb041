/* The one boundary between the C++ core and the Lua module.
 *
 * Every function the Lua side calls is declared in a header of this folder, between the cdef markers;
 * the build turns those declarations into the Lua module iris.cdef (cmake/generate_cdef.cmake), so the C and
 * Lua views cannot drift apart. Conventions (as lua-resty-core's):
 *   - names start with iris_;
 *   - a function that can fail returns int: 0 on success, -1 on failure, with the message in
 *     iris_last_error() and its kind ("heap_exhausted", "environment", ...) in iris_last_error_kind();
 *   - Lua raises the error at the caller's line (src/lua/iris/errors.lua).
 * Bump IRIS_ABI_VERSION when a declaration changes; the Lua side refuses a host of another version.
 *
 * This header holds the process-level functions (version, errors, ranks, logging, host collectives and
 * the byte exchange); the others: capi_memory.h (session, heap, tensor memory), capi_kernels.h
 * (compiling and launching), capi_testing.h (the test runner), capi_repl.h (the REPL).
 */
#ifndef IRIS_CAPI_H
#define IRIS_CAPI_H

#include <stddef.h>
#include <stdint.h>

#define IRIS_ABI_VERSION 11

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
int iris_abi_version(void);
const char* iris_version(void);
const char* iris_last_error(void);
const char* iris_last_error_kind(void);
/* When the last error was a collective mismatch (kind "divergence", from a host collective): the
   operation this rank is in, the rank that is in another one and that one's; returns 1, or 0 (and sets
   nothing) after any other error. Valid until the next error. */
int iris_last_divergence(const char** op, int* peer, const char** peer_op);
/* The process exit code for an error of this kind (src/core/errors.def): 2 for usage and environment
   errors, 1 for the others (and for a name it does not know). */
int iris_exit_code(const char* kind);

int iris_rank(void);
int iris_world_size(void);

/* The environment variable `name` as its one reader sees it (src/core/env.def declares every variable
   iris-lua reads): *value is its text, or NULL when it is unset or empty; valid until the next call.
   An error for a name env.def does not declare. */
int iris_env(const char* name, const char** value);

/* level: 0 debug, 1 info, 2 warning, 3 error */
int iris_log_enabled(int level);
void iris_log(int level, const char* message);

int iris_parse_byte_size(const char* text, const char* what, uint64_t* out);
/* Host collectives for the Lua side: announce() catches divergent calls (see src/comm/comm.hpp). */
int iris_announce(const char* op, uint64_t arg, uint64_t* args_of_all_ranks);

/* Bytes between the ranks: the one exchange the Lua side's own protocols use (the test runner's case
 * results, the REPL's commands and results, ctx:broadcast's values). Collective: every rank calls it
 * with the same lane, route and root, and passes `bytes` bytes at `mine`.
 *   route IRIS_ROUTE_TO_ALL: every rank receives every rank's bytes;
 *         IRIS_ROUTE_FROM_ROOT: every rank receives root's (the others' are not sent);
 *         IRIS_ROUTE_TO_ROOT: root receives every rank's, the others nothing.
 *   lane IRIS_LANE_JOB: one of the job's collectives, announced as `op` (a rank in another collective
 *        gets a mismatch naming both; a finished peer or Ctrl-C ends the wait with an error);
 *        IRIS_LANE_SESSION: the REPL's messages, on a communicator of their own that a collective cut
 *        short by Ctrl-C never disturbs; its waits end only when the bytes are there;
 *        IRIS_LANE_SESSION_WATCHED: the same communicator, waited for as the job's collectives are (a
 *        hang report after IRIS_HANG_REPORT, an error after IRIS_HANG_TIMEOUT): a REPL reading a pipe
 *        has nobody to press Ctrl-C when one rank never finishes a command.
 * *received: what arrived, rank after rank; lengths[r]: rank r's share (world_size entries, 0 where
 * nothing came from r). Valid until the next exchange. */
enum { IRIS_LANE_JOB = 0, IRIS_LANE_SESSION = 1, IRIS_LANE_SESSION_WATCHED = 2 };
enum { IRIS_ROUTE_TO_ALL = 0, IRIS_ROUTE_FROM_ROOT = 1, IRIS_ROUTE_TO_ROOT = 2 };
int iris_exchange_bytes(int lane, int route, int root, const char* op, const char* mine, size_t bytes,
                        const char** received, uint64_t* lengths);
/* Collective: continue on fresh communicators after Ctrl-C left collectives out of step (the REPL). */
int iris_comm_renew(void);
/* Local: while `reason` is not NULL or "", this rank runs code the others do not (the REPL's :on R), and
   every collective fails at once naming the reason. */
void iris_comm_run_alone(const char* reason);
/* Local: fails, naming `op`, while this rank runs alone (iris_comm_run_alone) in a job of several ranks;
   for collectives that wait for other ranks on the device, without a host collective (ctx.ccl's). */
int iris_comm_require_every_rank(const char* op);
/* Steady clock in seconds, for timing on the host. */
double iris_wall_time(void);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
