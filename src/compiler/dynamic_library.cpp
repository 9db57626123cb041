#include "compiler/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include "core/error.hpp"

namespace iris::compiler {

DynamicLibrary::DynamicLibrary(const std::vector<std::string>& candidates, const char* required_symbol,
                               const std::string& what, const std::string& hint)
    : what_(what) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      tried += "\n  " + candidate + ": " + dlerror();
      continue;
    }
    if (dlsym(handle, required_symbol) == nullptr) {
      tried += "\n  " + candidate + ": has no " + required_symbol;
      dlclose(handle);
      continue;
    }
    handle_ = handle;
    const struct link_map* map = nullptr;
    path_ = (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name[0] != '\0') ? map->l_name
                                                                                                     : candidate;
    return;
  }
  throw Error(Errc::environment, what + " not found; tried:" + tried + "\n" + hint);
}

DynamicLibrary::~DynamicLibrary() {
  // Left loaded: compilers keep process-wide state (and NVRTC's builtins library) that does not
  // survive being unloaded and loaded again in one process.
}

void* DynamicLibrary::symbol(const char* name) const {
  void* p = dlsym(handle_, name);
  if (p == nullptr) throw Error(Errc::environment, what_ + " (" + path_ + ") has no function " + name);
  return p;
}

std::vector<std::string> toolkit_directories(const std::vector<const char*>& env_vars,
                                             const std::vector<std::string>& fallbacks,
                                             const std::vector<std::string>& subdirs) {
  std::vector<std::string> roots;
  for (const char* var : env_vars) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') roots.emplace_back(value);
  }
  roots.insert(roots.end(), fallbacks.begin(), fallbacks.end());
  std::vector<std::string> directories;
  for (const std::string& root : roots) {
    for (const std::string& sub : subdirs) directories.push_back(sub.empty() ? root : root + "/" + sub);
  }
  return directories;
}

}  // namespace iris::compiler
