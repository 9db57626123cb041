/* The REPL's C side (docs/repl.md): the Lua side (src/lua/iris/repl.lua) holds the policy (chunks,
 * meta-commands, printing); these functions hold the mechanism: reading lines on rank 0, the terminal
 * under mpirun, capturing a rank's output, Ctrl-C. Commands and results travel between the ranks
 * through iris_exchange_bytes (IRIS_LANE_SESSION), chunks are timed with iris_timer. Strings returned
 * through `const char**` stay valid until the next call of the same function. */
#ifndef IRIS_CAPI_REPL_H
#define IRIS_CAPI_REPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cdef:begin */
/* Collective: every rank opens the session together. `stdin_is_terminal` is what the command line
   saw. On rank 0, *input says how lines are read: 0 from a pipe or file (no prompts), 1 plain lines
   with prompts, 2 with line editing; other ranks get 0. */
int iris_repl_open(int stdin_is_terminal, int* input);
/* Collective: every rank closes the session together. */
int iris_repl_close(void);

/* Rank 0. *status: 0 a line (*line, *bytes), 1 end of input, 2 Ctrl-C at the prompt. */
int iris_repl_read_line(const char* prompt, int* status, const char** line, size_t* bytes);
int iris_repl_remember(const char* line);

/* What Ctrl-C does during a command (src/repl/interrupts.hpp). end returns the Ctrl-C presses. */
void iris_repl_begin_command(uint32_t sequence);
void iris_repl_begin_running(void);
void iris_repl_stop_running(void);
int iris_repl_end_command(void);

/* This rank's standard output and error from begin to end (when several ranks print in rank order). */
int iris_repl_begin_capture(void);
int iris_repl_end_capture(const char** out, size_t* out_bytes, const char** err, size_t* err_bytes);

/* Rank 0: the word before the cursor completed with Tab calls `complete`, which returns the words it
   could become, one a line (valid until its next call). NULL: no completion. */
typedef const char* (*iris_repl_completer)(const char* word);
int iris_repl_set_completer(iris_repl_completer complete);
/* Rank 0: the path of the transcript file the REPL reads (its input, or mpirun's), "" for a terminal
   or a pipe. */
const char* iris_repl_input_name(void);

/* This process, for :ranks. */
const char* iris_repl_host_name(void);
int64_t iris_repl_pid(void);
/* cdef:end */

#ifdef __cplusplus
}
#endif

#endif
