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

}  // namespace iris::interrupt
