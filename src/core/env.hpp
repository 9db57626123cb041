// The environment variables iris-lua reads (declared in core/env.def, documented in docs/environment.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Typed readers. Each gives `fallback` when the variable is unset or empty, and throws
// Error(environment) for a value it cannot read, naming the variable, what it accepts and what it got:
// "IRIS_CPU_THREADS must be a whole number from 1 to 4096, got 'many'".

// 0 or 1.
bool flag(Var var, bool fallback);
// A whole number from `min` to `max`; `what` says what it counts ("a whole number of events").
uint64_t whole_number(Var var, uint64_t min, uint64_t max, uint64_t fallback, const char* what = "a whole number");
// A number of seconds above 0, or from 0 when `zero_means_never` (the message then says so).
double seconds(Var var, double fallback, bool zero_means_never);
// One of `names`: its index.
size_t choice(Var var, const std::vector<const char*>& names, size_t fallback);
// A byte size as users write them (512MiB, 2GiB: core/units.hpp).
uint64_t bytes(Var var, uint64_t fallback);

// IRIS_TRACE_EVENTS as the trace takes it.
uint32_t trace_events(uint32_t fallback);

}  // namespace iris::env
