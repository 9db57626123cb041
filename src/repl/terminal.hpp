// Rank 0 under mpirun edits lines on mpirun's terminal (docs/repl.md, "Under mpirun").
//
// mpirun gives rank 0 a pipe as standard input and copies the terminal into it; on Ctrl-C it ends the
// whole job (Open MPI 4.1). Taking the terminal's foreground away from mpirun does not work: mpirun
// keeps reading the terminal and is stopped by SIGTTIN. So mpirun stays in the foreground, and rank 0
// sets the terminal's modes instead (rank 0 is in mpirun's session and may, with SIGTTOU ignored):
//   - no canonical mode: mpirun forwards every key as it is typed, so libedit can edit the line;
//   - no signal keys: Ctrl-C reaches mpirun as the byte 0x03 and is forwarded like any key, so the
//     job is not ended; a relay thread on rank 0 reads the keys and turns a Ctrl-C that comes while
//     no line is being read into SIGINT for rank 0 (which interrupts the chunk, see
//     repl/interrupts.hpp); the other keys wait for the next line.
// Rank 0's standard output and error point at the terminal meanwhile (prompts and results appear in
// order) and its standard input at /dev/null (io.read() in a chunk gets nil rather than stealing keys).
// Everything is put back on close, and on SIGTERM or SIGHUP (mpirun ending the job).
#pragma once

#include <memory>
#include <string>

namespace iris::repl {

// The file rank 0's input is read from when it is a regular file (a replayed transcript:
// `iris-lua < lab.repl`, also under mpirun, whose own input it then is): its path (relative to the
// working directory when it is under it), or "" for a terminal or a pipe.
std::string transcript_path(bool under_launcher);

class TerminalRelay {
 public:
  // The relay when the launcher (our parent) reads and writes a terminal; null otherwise.
  // `launcher_reads_terminal` says whether the launcher's input is a terminal at all (so the REPL
  // should at least show prompts).
  static std::unique_ptr<TerminalRelay> start(bool* launcher_reads_terminal);
  ~TerminalRelay();  // puts the terminal and rank 0's standard streams back
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;

  // The terminal, for libedit's mode changes and output.
  int terminal_fd() const;
  // While a line is read, Ctrl-C is a key for the line editor; otherwise it interrupts.
  void set_reading_line(bool reading);
  // The next key byte (waits for it); -1 once mpirun closed the input.
  int next_byte();

 private:
  struct State;
  explicit TerminalRelay(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace iris::repl
