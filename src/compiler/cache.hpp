// The on-disk cache of compiled kernels (IRIS_CACHE_DIR). An entry is the compiled code and its symbol
// table, stored under a 128-bit digest of everything that decides the code: the translation unit
// (snippet and header include), options and defines, the device header's contents, the compiler and
// its version, the architecture and the exported names. A hit runs no compiler.
//
// The ranks of a node share the directory. For a missing entry one process compiles while the others
// wait on the entry's lock file (flock) and then read what it wrote. No MPI collective is involved, so
// a compile that happens on one rank alone (a lazily requested template instance) cannot hang.
#pragma once

#include <functional>
#include <string>

#include "compiler/compiler.hpp"

namespace iris::compiler {

class KernelCache {
 public:
  // Creates the directory if needed; throws Error(environment) if it cannot.
  explicit KernelCache(std::string dir);
  const std::string& dir() const { return dir_; }

  // The code stored under `digest`, or the result of `compile()` (run while holding the lock, then
  // stored). Errors of `compile` propagate and store nothing.
  CompiledCode get_or_compile(const std::string& digest, const std::function<CompiledCode()>& compile);

 private:
  std::string entry_path(const std::string& digest) const;
  std::string dir_;
};

// IRIS_CACHE_DIR, else $XDG_CACHE_HOME/iris-lua, else $HOME/.cache/iris-lua.
std::string default_cache_dir();

}  // namespace iris::compiler
