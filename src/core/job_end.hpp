// What still gets written when a rank's job ends abnormally (docs/reliability.md, "A failed job still
// leaves its trace"): an error that ends the job, a rank that gives up waiting, a test that cannot be
// stopped, the launcher's SIGTERM after a rank died or the job was aborted, a rank's death seen by
// another. Every one of those ways out calls failed(); the layer that has something to write (the
// trace: session/trace_session.cpp) sets the writer while it has.
#pragma once

#include <string>

namespace iris::job_end {

// Writes what must be written when the job ends abnormally: `how` says how it ends, `exit_code` with
// what. Runs on whichever thread calls failed() (the main thread, or the hang report's watcher).
using Writer = void (*)(const std::string& how, int exit_code);

// Sets the writer (null: none). While one is set, SIGTERM no longer ends the process at once: its
// handler notes it and poll() runs the writer first, then ends the process by the signal as before.
void set_writer(Writer writer);
bool armed();

// Runs the writer, once per process: a second call (another thread, another way out) waits until the
// first is done, then returns. Returns at once when no writer is set.
void failed(const std::string& how, int exit_code);

// Called every few tens of milliseconds by a thread that is never blocked for long (the hang report's
// watcher): a SIGTERM noted meanwhile runs the writer, then ends the process by that signal.
void poll();

}  // namespace iris::job_end
