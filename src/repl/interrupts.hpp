// Ctrl-C in the REPL (docs/repl.md, "Ctrl-C").
//
// While the REPL runs, SIGINT is handled here instead of by the host, because what a Ctrl-C means
// depends on where the session is:
//   - a chunk is running on this rank: the chunk is interrupted ("interrupted!" in Lua, Errc::interrupted
//     in C++ waits) and, on rank 0, the Ctrl-C is forwarded to the other ranks of this host;
//   - rank 0 waits for the other ranks' results: the Ctrl-C is forwarded to them;
//   - between commands: nothing happens (a stale forwarded Ctrl-C never interrupts the next command);
//   - rank 0 presses Ctrl-C again, a second or more after the first, during the same command: the
//     chunk did not stop (a loop compiled by the JIT never looks at the interrupt, C code neither), so
//     iris-lua ends the way a second Ctrl-C ends luajit: by SIGINT, after putting the terminal's modes
//     back. (Within the second it is taken for the same impatient gesture.)
// Forwarding uses sigqueue() with the command's sequence number, so a rank ignores a notice meant for
// a command it has already finished. Ranks on other hosts cannot be reached this way.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace iris::repl {

// Installs the REPL's SIGINT handler until uninstall_interrupts() restores the previous one.
void install_interrupts(bool is_root);
void uninstall_interrupts();

// Rank 0: the processes of the other ranks on this host, and what to say when some ranks cannot be
// reached (empty when every rank can).
void set_interrupt_peers(const std::vector<pid_t>& local_peers, const std::string& unreachable_note);
// Rank 0: where the handler writes its messages, and what must run before it ends the process
// (async-signal-safe: putting the terminal's modes back).
void set_interrupt_console(int fd);
void set_interrupt_cleanup(void (*cleanup)());

void begin_command(uint32_t sequence);  // a new command: the count of Ctrl-C presses restarts
void begin_running();                   // this rank's chunk runs: Ctrl-C interrupts it
void stop_running();                    // the chunk has ended: an interrupt that has not fired is withdrawn
int end_command();                      // back between commands; returns the Ctrl-C presses it saw

// Reading a line without the line editor: a Ctrl-C makes the read fail (EINTR) instead of being
// restarted. end_reading() says whether one came.
void begin_reading();
bool end_reading();

}  // namespace iris::repl
