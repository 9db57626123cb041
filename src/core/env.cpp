#include "core/env.hpp"

#include <cerrno>
#include <cstdlib>

#include "core/error.hpp"
#include "core/units.hpp"

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

namespace {
[[noreturn]] void refuse(Var var, const std::string& accepted, const std::string& text) {
  throw Error(Errc::environment, format("%s must be %s, got '%s'", info(var).name, accepted.c_str(), text.c_str()));
}
}  // namespace

bool flag(Var var, bool fallback) {
  const auto text = get(var);
  if (!text) return fallback;
  if (*text != "0" && *text != "1") refuse(var, "0 or 1", *text);
  return *text == "1";
}

uint64_t whole_number(Var var, uint64_t min, uint64_t max, uint64_t fallback, const char* what) {
  const auto text = get(var);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text->c_str(), &end, 10);
  const bool read = end != text->c_str() && *end == '\0' && errno == 0 && (*text)[0] != '-';
  if (!read || n < min || n > max) {
    const std::string highest = max == UINT64_MAX ? "2^64-1" : std::to_string(max);
    refuse(var, format("%s from %llu to %s", what, static_cast<unsigned long long>(min), highest.c_str()), *text);
  }
  return n;
}

double seconds(Var var, double fallback, bool zero_means_never) {
  const auto text = get(var);
  if (!text) return fallback;
  char* end = nullptr;
  const double s = std::strtod(text->c_str(), &end);
  const bool read = end != text->c_str() && *end == '\0';
  // The bound keeps nanoseconds within 64 bits (and means "never" in practice).
  if (!read || !(zero_means_never ? s >= 0 : s > 0) || s > 1e9) {
    refuse(var, zero_means_never ? "a number of seconds (0: never)" : "a number of seconds above 0", *text);
  }
  return s;
}

size_t choice(Var var, const std::vector<const char*>& names, size_t fallback) {
  const auto text = get(var);
  if (!text) return fallback;
  std::string accepted;
  for (size_t i = 0; i < names.size(); ++i) {
    if (*text == names[i]) return i;
    accepted += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  }
  refuse(var, accepted, *text);
}

uint64_t bytes(Var var, uint64_t fallback) {
  const auto text = get(var);
  if (!text) return fallback;
  try {
    return parse_byte_size(*text, info(var).name);
  } catch (const Error& e) {
    throw Error(Errc::environment, e.what());  // a setting of the environment: exit code 2
  }
}

uint32_t trace_events(uint32_t fallback) {
  return static_cast<uint32_t>(whole_number(Var::trace_events, 1, 100000000, fallback, "a whole number of events"));
}

}  // namespace iris::env
