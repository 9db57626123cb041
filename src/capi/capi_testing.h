/* The test runner's mechanism: finding test files and the per-case timeout (the ranks exchange case
 * results through iris_exchange_bytes). The policy (what a case is, what is printed) is in src/lua/iris/testing.lua;
 * docs/lua-testing.md describes both. */
#ifndef IRIS_CAPI_TESTING_H
#define IRIS_CAPI_TESTING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
/* The test files `path` names: the file itself, or every *.lua file under a directory (recursive,
 * sorted). `*list` receives the paths, each followed by a '\0', `*bytes` their total length; valid until
 * the next call. A path that does not exist is a usage error. */
int iris_testing_collect_files(const char* path, const char** list, size_t* bytes);
/* Arms the per-case timeout: `seconds` from now the running Lua code is interrupted with the error
 * `message` (as is, without a position; as Ctrl-C interrupts it); if the case has still not ended `grace_seconds` later (stuck where an
 * interrupt cannot reach), `stuck_message` goes to stderr and the process exits with 1. */
int iris_testing_arm_timeout(double seconds, const char* message, double grace_seconds, const char* stuck_message);
/* Disarms it. Returns 1 when it fired (the case timed out), else 0; either way nothing more is raised. */
int iris_testing_disarm_timeout(void);
/* Keeps what this process writes to its standard output (print, io.write, printf) from now until
 * iris_testing_end_capture, which puts it back and returns the text (valid until the next call). Standard
 * error stays as it is: log lines and a stuck case's message still reach the terminal. */
int iris_testing_begin_capture(void);
int iris_testing_end_capture(const char** text, size_t* bytes);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
