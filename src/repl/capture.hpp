// What a rank writes while a REPL chunk runs, kept so that rank 0 can print every rank's output in rank
// order. Captured at the file descriptors (1 and 2), so print, io.write, io.stdout:write, C++ log lines
// and printf from native code are all caught; each stream goes to an in-memory file (memfd). The test
// runner keeps a case's standard output alone the same way (OutputCapture(1)).
#pragma once

#include <cstddef>
#include <string>

namespace iris::repl {

class OutputCapture {
 public:
  // At most this much of each stream comes back; the rest is counted in a note.
  static constexpr size_t kLimitBytes = 16u << 20;

  // `streams`: 2 for standard output and error, 1 for standard output alone (stop's `err` is then "").
  explicit OutputCapture(int streams = 2) : streams_(streams) {}
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // Points stdout and stderr at fresh in-memory files. Throws Error(environment) when it cannot.
  void start();
  // Puts stdout and stderr back and returns what was written to each.
  void stop(std::string* out, std::string* err);
  bool active() const { return active_; }

 private:
  int streams_ = 2;
  bool active_ = false;
  int files_[2] = {-1, -1};  // the in-memory files for fd 1 and 2
  int saved_[2] = {-1, -1};  // the real fd 1 and 2
};

}  // namespace iris::repl
