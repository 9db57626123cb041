#include "core/error.hpp"

#include <cstdarg>
#include <cstdio>

namespace iris {

int exit_code_of(Errc code) {
  switch (code) {
#define IRIS_ERROR(name, exit_code, summary) \
  case Errc::name:                           \
    return exit_code;
#include "core/errors.def"
#undef IRIS_ERROR
  }
  return 1;
}

const char* name_of(Errc code) {
  switch (code) {
#define IRIS_ERROR(name, exit_code, summary) \
  case Errc::name:                           \
    return #name;
#include "core/errors.def"
#undef IRIS_ERROR
  }
  return "internal";
}

Errc errc_named(const std::string& name) {
#define IRIS_ERROR(kind, exit_code, summary) \
  if (name == #kind) return Errc::kind;
#include "core/errors.def"
#undef IRIS_ERROR
  return Errc::internal;
}


std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

std::string human_bytes(unsigned long long bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return format("%llu B", bytes);
  if (value == static_cast<double>(static_cast<long long>(value))) return format("%lld %s", static_cast<long long>(value), units[unit]);
  return format("%.1f %s", value, units[unit]);
}

}  // namespace iris
