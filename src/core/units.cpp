#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace iris {

uint64_t parse_byte_size(const std::string& text, const char* what) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double number = std::strtod(begin, &end);
  auto fail = [&]() -> Error {
    return Error(Errc::invalid_argument,
                 format("%s: cannot read '%s' as a size: use bytes or a number with B, KiB, MiB, GiB, TiB (or KB, MB, GB)",
                        what, text.c_str()));
  };
  if (end == begin || !(number >= 0) || !std::isfinite(number)) throw fail();
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  std::string unit(end);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mib") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb") scale = 1e3;
  else if (unit == "mb") scale = 1e6;
  else if (unit == "gb") scale = 1e9;
  else if (unit == "tb") scale = 1e12;
  else throw fail();
  double bytes = number * scale;
  if (bytes != std::floor(bytes) || bytes > 1.8e19) throw fail();
  return static_cast<uint64_t>(bytes);
}

}  // namespace iris
