// Ctrl-C: the signal handler only sets a flag. Lua notices it through a debug hook ("interrupted!"),
// long waits in C++ (collectives, device synchronization) poll it and throw Errc::interrupted.
#pragma once

namespace iris::interrupt {

void request();          // async-signal-safe
void clear();
// Whether a request is pending, without clearing it: for loops that must stop on other threads first
// (the cpu executor's workers) and report it once, through check().
bool pending();
// Throws Error(Errc::interrupted) when a request is pending (and clears it).
void check(const char* where);

// Stopping the running script with a message, from another thread or a signal handler (the test
// runner's per-case timeout, Ctrl-C in the REPL), the way Ctrl-C stops it: request(), and the script
// raises `message` (as is, without a position) at its next interpreted instruction (compiled loops do
// not look, as with Ctrl-C). `message` must stay valid until it is raised or withdrawn.
// Async-signal-safe.
void interrupt_script(const char* message);
// Withdraws a request the script has not acted on yet and clears the flag, so nothing is raised after
// the code the request was meant for has ended. Call from the thread that runs Lua.
void withdraw_script_interrupt();

// The Host's side (it owns the Lua state): `notify` makes the running Lua code look at once (a debug
// hook, async-signal-safe), which then raises take_script_message() unless that is null (withdrawn).
void set_script_notifier(void (*notify)());
const char* take_script_message();

}  // namespace iris::interrupt
