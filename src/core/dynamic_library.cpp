#include "core/dynamic_library.hpp"

#include <dlfcn.h>

#include "core/error.hpp"

namespace iris {

DynamicLibrary DynamicLibrary::open(const std::vector<std::string>& candidates, const std::string& what,
                                    const std::string& advice) {
  std::string tried;
  for (const std::string& name : candidates) {
    // RTLD_LOCAL: the vendor's symbols stay out of the global namespace the Lua FFI resolves in.
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(handle, name);
    const char* reason = dlerror();
    tried += format("%s%s (%s)", tried.empty() ? "" : ", ", name.c_str(), reason ? reason : "unknown reason");
  }
  throw Error(Errc::environment, format("cannot load %s: tried %s; %s", what.c_str(), tried.c_str(), advice.c_str()));
}

void* DynamicLibrary::symbol(const char* name) const { return dlsym(handle_, name); }

}  // namespace iris
