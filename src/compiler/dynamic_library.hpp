// A shared library opened at run time (NVRTC, hiprtc), so the binary starts where it is not installed.
#pragma once

#include <string>
#include <vector>

namespace iris::compiler {

class DynamicLibrary {
 public:
  // Opens the first candidate (a soname or a path) that loads and exports `required_symbol`. Throws
  // Error(environment): "<what> not found (tried: ...). <hint>".
  DynamicLibrary(const std::vector<std::string>& candidates, const char* required_symbol, const std::string& what,
                 const std::string& hint);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The named function; throws Error(environment) naming the library if it is missing.
  template <class F>
  F function(const char* name) const {
    return reinterpret_cast<F>(symbol(name));
  }
  // The file that was loaded.
  const std::string& path() const { return path_; }

 private:
  void* symbol(const char* name) const;
  void* handle_ = nullptr;
  std::string path_;
  std::string what_;
};

// Directories a toolkit may be in: $<env_var>/<subdir> for each variable set, then the fallbacks.
std::vector<std::string> toolkit_directories(const std::vector<const char*>& env_vars,
                                             const std::vector<std::string>& fallbacks,
                                             const std::vector<std::string>& subdirs);

}  // namespace iris::compiler
