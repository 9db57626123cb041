// One exception type for every failure inside iris-lua's C++ core. The C boundary (src/capi) turns it
// into a status code plus message; the Lua side raises it at the user's line.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace iris {

enum class Errc {
#define IRIS_ERROR(name, exit_code, summary) name,
#include "core/errors.def"
#undef IRIS_ERROR
};

// Process exit code for an error of this kind (1 or 2, as errors.def says).
int exit_code_of(Errc code);
// Stable lower-case name, as Lua sees it in err.kind ("heap_exhausted", ...).
const char* name_of(Errc code);
// The kind of that name; Errc::internal for a name errors.def does not have.
Errc errc_named(const std::string& name);

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

// A host collective's mismatch (Errc::divergence) with its facts: the operation this rank is in, and the
// rank that is in another one. The C API hands them to Lua (iris_last_divergence), so that the test
// runner tells a rank that left a case from one that called the wrong collective without reading the
// message.
class CollectiveMismatch : public Error {
 public:
  CollectiveMismatch(const std::string& message, std::string op, int peer, std::string peer_op)
      : Error(Errc::divergence, message), op_(std::move(op)), peer_(peer), peer_op_(std::move(peer_op)) {}
  const std::string& op() const { return op_; }
  int peer() const { return peer_; }
  const std::string& peer_op() const { return peer_op_; }

 private:
  std::string op_;
  int peer_;
  std::string peer_op_;
};

// printf-style formatting into a std::string; used to build error messages.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// "1.5 GiB", "256 B": sizes as they appear in error messages.
std::string human_bytes(unsigned long long bytes);

}  // namespace iris
