#include "compiler/cpu_source.hpp"

#include <cctype>
#include <regex>

#include "core/env.hpp"
#include "core/error.hpp"

namespace iris::compiler {

std::string rewrite_dynamic_shared(const std::string& source) {
  // extern __shared__ <type> <name> [ ] ;   (the type may carry __align__(16) and the like)
  static const std::regex declaration(R"(\bextern\s+__shared__\s+([^;\[]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  std::string out;
  auto begin = source.cbegin();
  for (std::sregex_iterator it(source.begin(), source.end(), declaration), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(begin, m[0].first);
    out += "IRIS_CPU_DYNAMIC_SHARED(" + m[1].str() + ", " + m[2].str() + ")";
    for (char c : m[0].str()) {
      if (c == '\n') out += '\n';
    }
    begin = m[0].second;
  }
  out.append(begin, source.cend());
  return out;
}

std::vector<std::string> cpu_memory_model_flags() {
  if (env::choice(env::Var::cpu_memory_model, {"tso", "weak"}, 0) == 0) return {};
  return {"-DIRIS_CPU_WEAK_MEMORY=1"};
}

}  // namespace iris::compiler
