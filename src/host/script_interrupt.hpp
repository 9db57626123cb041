// Stopping the running script from another thread, the way Ctrl-C stops it from a signal handler.
// The test runner's per-case timeout uses it (src/capi/capi_testing.cpp); host.cpp owns the Lua state
// that runs, so it defines these.
#pragma once

namespace iris::host {

// Raises `message` (as is, without a position) in the running Lua code at its next interpreted instruction (compiled loops do not
// look, as with Ctrl-C) and makes C++ waits (collectives, device synchronization) throw
// Errc::interrupted. `message` must stay valid until withdraw_script_interrupt(). Any thread.
void interrupt_script(const char* message);

// Withdraws a request the script has not acted on yet and clears the interrupt flag, so nothing is
// raised after the code the request was meant for has ended. Call from the thread that runs Lua.
void withdraw_script_interrupt();

}  // namespace iris::host
