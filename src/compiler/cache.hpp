// The on-disk cache of compiled kernels (IRIS_CACHE_DIR). An entry is the compiled code and its symbol
// table, stored under a 128-bit digest of everything that decides the code: the translation unit
// (snippet and header include), options and defines, the device header's contents, the compiler and
// its version, the architecture and the exported names. A hit runs no compiler.
//
// The ranks of a node share the directory. For a missing entry one process compiles while the others
// wait on the entry's lock file (flock) and then read what it wrote. No MPI collective is involved, so
// a compile that happens on one rank alone (a lazily requested template instance) cannot hang.
//
// Loaded code runs as the user, so the cache is trusted only as far as it deserves: the directory must
// belong to the user and be writable by nobody else (else it is refused), and every entry carries a
// digest of its content, checked before it is used (a damaged entry is compiled again, with one
// warning naming the file).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "compiler/compiler.hpp"

namespace iris::compiler {

class KernelCache {
 public:
  // Creates the directory if needed (private to the user) and removes what compiles of processes no
  // longer running left in its tmp/; what they left among the entries goes when this process first
  // stores one (a start that finds every kernel cached lists no directory). Throws Error(environment)
  // when it cannot be created or written, or is not trusted (untrusted_because), saying why.
  explicit KernelCache(std::string dir);
  // No cache: a private temporary directory for the compilers' headers and files, removed when the
  // KernelCache goes; every get_or_compile compiles.
  static std::unique_ptr<KernelCache> without_storage();
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  const std::string& dir() const { return dir_; }
  bool stores() const { return stores_; }

  // The code stored under `digest`, or the result of `compile()` (run while holding the lock, then
  // stored). Errors of `compile` propagate and store nothing.
  CompiledCode get_or_compile(const std::string& digest, const std::function<CompiledCode()>& compile);

 private:
  KernelCache() = default;
  std::string entry_path(const std::string& digest) const;
  // Keeps kernels/ within IRIS_CACHE_MAX: removes the least recently used entries (never `keep`) and
  // lock files nobody holds.
  void evict(const std::string& keep);
  std::string dir_;
  bool stores_ = true;
  uint64_t max_bytes_ = 0;  // IRIS_CACHE_MAX; 0: no bound
  std::once_flag entries_swept_;
};

// IRIS_CACHE_DIR, else $XDG_CACHE_HOME/iris-lua, else $HOME/.cache/iris-lua.
std::string default_cache_dir();

}  // namespace iris::compiler
