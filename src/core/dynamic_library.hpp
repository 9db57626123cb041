// A shared library opened at run time (dlopen). The GPU backends reach their vendor runtimes this way
// (libcuda.so.1, libamdhip64.so), so iris-lua links against neither and starts on machines that lack
// them; `auto` then falls back with the reason.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

// The symbol a vendor header maps `function` to, as a string. Two levels, so that the argument is
// macro-expanded first: with cuda.h, IRIS_SYMBOL_NAME(cuMemAlloc) is "cuMemAlloc_v2".
#define IRIS_SYMBOL_NAME_(symbol) #symbol
#define IRIS_SYMBOL_NAME(symbol) IRIS_SYMBOL_NAME_(symbol)

namespace iris {

class DynamicLibrary {
 public:
  // Opens the first of `candidates` that loads. Throws Error(environment): "cannot load <what>:
  // tried <name> (<dlerror>), ...; <advice>".
  static DynamicLibrary open(const std::vector<std::string>& candidates, const std::string& what,
                             const std::string& advice);

  // The symbol's address, or nullptr when the library has no such symbol.
  void* symbol(const char* name) const;
  // Sets `function` to the symbol `name`, of the type the caller declared it with; throws
  // Error(environment) "<library> has no <name>" when the library lacks it.
  template <class Function>
  void bind(Function& function, const char* name) const {
    function = reinterpret_cast<Function>(symbol(name));
    if (function == nullptr) throw Error(Errc::environment, name_ + " has no " + name);
  }
  // The name it was opened under ("libcuda.so.1").
  const std::string& name() const { return name_; }

  // Never closed: vendor runtimes keep threads and handlers that outlive any object of ours, and
  // unloading them before exit is a known source of crashes at exit.

 private:
  DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_;
  std::string name_;
};

// A vendor runtime, loaded once per process: `load()` runs on first use, and its failure is remembered
// and thrown again (as Error(environment)) on every later use.
template <class Runtime>
class LoadedOnce {
 public:
  template <class Load>
  const Runtime& get(Load&& load) {
    std::call_once(once_, [&] {
      try {
        loaded_ = std::make_unique<Runtime>(load());
      } catch (const Error& e) {
        failure_ = e.what();
      }
    });
    if (!loaded_) throw Error(Errc::environment, failure_);
    return *loaded_;
  }

 private:
  std::once_flag once_;
  std::unique_ptr<Runtime> loaded_;
  std::string failure_;
};

}  // namespace iris
