#include "runtime/gpu/module_lookup.hpp"

#include "core/error.hpp"

namespace iris::runtime::gpu {

void throw_not_in_module(const char* kind, const std::string& symbol, const char* call,
                         const std::string& driver_error) {
  throw Error(Errc::invalid_argument, format("%s '%s' is not in this module (%s returned %s)", kind, symbol.c_str(),
                                             call, driver_error.c_str()));
}

void check_global_size(const std::string& symbol, size_t size, size_t given) {
  if (size != given) {
    throw Error(Errc::invalid_argument,
                format("module variable '%s' is %zu bytes; %zu bytes were given", symbol.c_str(), size, given));
  }
}

}  // namespace iris::runtime::gpu
