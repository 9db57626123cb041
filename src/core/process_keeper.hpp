// What a rank starts ends with it (docs/reliability.md): a script's os.execute("sleep 40") or
// io.popen(...) used to outlive the job when the rank was ended (a test's timeout, MPI_Abort, a kill),
// the shell and its children reparented to init.
//
// The keeper is a small process of its own, started before anything else of the rank (before MPI, so
// the fork copies a small single-threaded process): the rank puts a tag into its environment, which
// every process it starts inherits, and holds the write end of a pipe whose read end only the keeper
// has. However the rank ends (its end, an abort, SIGKILL), the pipe closes; the keeper then ends every
// process of this user whose environment carries the tag (SIGTERM, then SIGKILL half a second later)
// and exits. It is not the rank's child (started through a double fork, so nothing is left to reap),
// holds no descriptor of the rank's (mpirun waits for none), and ignores the signals a terminal or a
// launcher sends the whole group (it must outlive the rank to do its work; it exits right after).
//
// What escapes it: a process that removes the tag from its environment (env -i, setsid with a clean
// environment): something started to outlive the job on purpose.
#pragma once

namespace iris::keeper {

// The variable that carries the tag (not IRIS_*: it is no setting).
constexpr const char* kTagVariable = "IRISLUA_OWNER";

// Starts the keeper of this process, once (later calls do nothing). Best effort: when it cannot be
// started the rank runs without one.
void start();

}  // namespace iris::keeper
