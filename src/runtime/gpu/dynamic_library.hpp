// A shared library opened at run time (dlopen). The GPU backends reach their vendor runtimes this way
// (libcuda.so.1, libamdhip64.so), so iris-lua links against neither and starts on machines that lack
// them; `auto` then falls back with the reason.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace iris::runtime::gpu {

class DynamicLibrary {
 public:
  // Opens the first of `candidates` that loads. Throws Error(environment): "cannot load <what>:
  // tried <name> (<dlerror>), ...; <advice>".
  static DynamicLibrary open(const std::vector<std::string>& candidates, const std::string& what,
                             const std::string& advice);

  // The symbol's address, or nullptr when the library has no such symbol.
  void* symbol(const char* name) const;
  // The name it was opened under ("libcuda.so.1").
  const std::string& name() const { return name_; }

  // Never closed: vendor runtimes keep threads and handlers that outlive any object of ours, and
  // unloading them before exit is a known source of crashes at exit.

 private:
  DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_;
  std::string name_;
};

}  // namespace iris::runtime::gpu
