// Rank 0 reads the REPL's input a line at a time: with libedit on a terminal (line editing, ~/.editrc,
// history kept in ~/.iris_lua_history), either its own standard input or mpirun's terminal through
// the relay (repl/terminal.hpp); else plainly from standard input.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace iris::repl {

class TerminalRelay;

class LineReader {
 public:
  enum class Result { line, end_of_input, interrupted };

  // `editing`: standard input and output are a terminal, or `relay` brings mpirun's terminal; libedit
  // edits the lines there (when iris-lua was built with it, see line_editing()).
  LineReader(bool editing, TerminalRelay* relay);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool line_editing() const;
  // Tab completes the word before the cursor (letters, digits, '_', '.' and ':') with what `complete`
  // returns for it: the words it could become, one a line. One candidate (or a longer common prefix)
  // is inserted; a second Tab lists them.
  using Completer = std::function<std::string(const std::string& word)>;
  void set_completer(Completer complete);
  // Shows `prompt` (none when empty) and reads one line, without its end of line. Ctrl-C at the
  // prompt gives `interrupted`, Ctrl-D on an empty line or the end of a pipe `end_of_input`.
  Result read(const std::string& prompt, std::string* line);
  // Adds a line to the history and saves the history file.
  void remember(const std::string& line);

 private:
  struct Editor;
  std::unique_ptr<Editor> editor_;  // null: plain reading
};

}  // namespace iris::repl
