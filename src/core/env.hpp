// The environment variables iris-lua reads (declared in core/env.def, documented in docs/environment.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace iris::env {

enum class Var {
#define IRIS_ENV(id, name, default_value, description) id,
#include "core/env.def"
#undef IRIS_ENV
};

struct Info {
  Var var;
  const char* name;
  const char* default_value;  // as documented; the code applying it holds the real default
  const char* description;
};

const Info& info(Var var);
// All variables, in declaration order; `count` receives how many.
const Info* all(size_t* count);

// The variable's value, or nothing when it is unset or empty.
std::optional<std::string> get(Var var);

}  // namespace iris::env
