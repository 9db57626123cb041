#include "core/env.hpp"

#include <cstdlib>

namespace iris::env {
namespace {
const Info kVariables[] = {
#define IRIS_ENV(id, name, default_value, description) {Var::id, name, default_value, description},
#include "core/env.def"
#undef IRIS_ENV
};
}  // namespace

const Info& info(Var var) { return kVariables[static_cast<size_t>(var)]; }

const Info* all(size_t* count) {
  *count = sizeof(kVariables) / sizeof(kVariables[0]);
  return kVariables;
}

std::optional<std::string> get(Var var) {
  const char* value = std::getenv(info(var).name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace iris::env
