// Interrupting the Lua code the host is running, for signal handlers other than the host's own Ctrl-C
// handler (the REPL handles SIGINT itself: it interrupts a chunk, ignores Ctrl-C between chunks and
// forwards it to the other ranks).
#pragma once

namespace iris::host {

// Async-signal-safe. Requests an interrupt (core/interrupt.hpp) and makes the running Lua code raise
// "interrupted!" at its next instruction, call or return (code compiled by the JIT notices only when
// it leaves its trace).
void interrupt_lua();
// Withdraws a pending interrupt that has not fired yet: clears the request and removes the hook set
// by interrupt_lua() (any other debug hook stays).
void cancel_lua_interrupt();

}  // namespace iris::host
