#include "host/environment_check.hpp"

#include <algorithm>
#include <cstring>

#include "comm/hang_report.hpp"
#include "compiler/cpu_source.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "programs/registry.hpp"
#include "runtime/backend.hpp"
#include "runtime/cpu/cpu_execution.hpp"
#include "runtime/gpu/device_sharing.hpp"
#include "session/proxy.hpp"

extern char** environ;

namespace iris::host {
namespace {

// Edits (insert, delete, replace) from a to b.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    previous.swap(current);
  }
  return previous[b.size()];
}

}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const size_t d = distance(word, candidate);
    if (d == 0) return "";  // no misspelling: the name itself
    if (d < best_distance && d < word.size()) best = candidate, best_distance = d;
  }
  return best;
}

namespace {

// Reads `var` as the code that uses it does. A switch without a default: a variable added to env.def
// without a line here does not compile (-Wswitch, an error here: as a warning, IRIS_CACHE_MAX and
// IRIS_NODE_SIZE went unchecked at start-up for a while).
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
void read(env::Var var) {
  switch (var) {
    case env::Var::backend:
      if (auto name = env::get(var); name && !runtime::is_backend_name(*name)) {
        throw Error(Errc::environment, format("IRIS_BACKEND must be %s, got '%s'", runtime::backend_names().c_str(),
                                              name->c_str()));
      }
      break;
    case env::Var::heap_size: env::bytes(var, 0); break;
    case env::Var::log_level: log::configure_from_environment(); break;
    case env::Var::cpu_threads: runtime::cpu_threads_from_environment(1); break;
    case env::Var::cpu_memory_model: compiler::cpu_memory_model_flags(); break;
    case env::Var::cpu_memory_seed: runtime::cpu_memory_seed_from_environment(0); break;
    case env::Var::cache_dir:
    case env::Var::cross_compile:
    case env::Var::wait_timeout:
    case env::Var::early_start:
    case env::Var::launch_blocking: programs::RegistryOptions::from_environment(); break;
    case env::Var::shared_gpu_warning: runtime::gpu::shared_device_warning_wanted(); break;
    case env::Var::hang_report:
    case env::Var::hang_timeout: comm::hang::settings_from_environment(); break;
    case env::Var::trace_events: env::trace_events(0); break;
    case env::Var::cache_max: env::bytes(var, 0); break;
    case env::Var::node_size: env::whole_number(var, 1, 1u << 20, 0, "a whole number of ranks"); break;
    case env::Var::node_transport: session::node_transport_from_environment(); break;
    case env::Var::cxx:           // any command
    case env::Var::lua_init:      // any chunk
    case env::Var::lua_init_5_1:  // any chunk
    case env::Var::trace:         // any file name (opened when the trace starts)
      break;
  }
}
#pragma GCC diagnostic pop

}  // namespace

std::vector<std::string> check_environment() {
  size_t count = 0;
  const env::Info* vars = env::all(&count);
  std::vector<std::string> names;
  for (size_t k = 0; k < count; ++k) {
    read(vars[k].var);
    names.push_back(vars[k].name);
  }
  std::vector<std::string> warnings;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    const std::string name(*entry, equals != nullptr ? static_cast<size_t>(equals - *entry) : std::strlen(*entry));
    if (name.rfind("IRIS_", 0) != 0) continue;
    // Only a near miss: other tools have IRIS_ variables of their own (the tests' IRIS_TEST_BACKEND).
    const std::string meant = nearest_name(name, names);
    if (!meant.empty()) {
      warnings.push_back(format("%s is not a variable iris-lua reads: did you mean %s?", name.c_str(), meant.c_str()));
    }
  }
  return warnings;
}

}  // namespace iris::host
