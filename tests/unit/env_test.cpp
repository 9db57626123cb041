// The typed readers of iris's environment variables (core/env.hpp): defaults, accepted values, and
// messages that name the variable, what it accepts and what it got.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/env.hpp"
#include "core/error.hpp"

using iris::Errc;
using iris::Error;
namespace env = iris::env;

namespace {

// Sets (or unsets) one variable for a test's duration, then puts back what was there.
class Setting {
 public:
  Setting(env::Var var, const char* value) : name_(env::info(var).name) {
    if (const char* old = std::getenv(name_)) old_ = old;
    if (value != nullptr) {
      setenv(name_, value, 1);
    } else {
      unsetenv(name_);
    }
  }
  ~Setting() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message of the environment error `read` throws.
template <class Read>
std::string refusal(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("an unset or empty variable gives the fallback", "[unit][env]") {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    Setting unset(env::Var::cpu_threads, value);
    CHECK(env::whole_number(env::Var::cpu_threads, 1, 4096, 7) == 7);
    Setting flag(env::Var::launch_blocking, value);
    CHECK(env::flag(env::Var::launch_blocking, true));
    CHECK_FALSE(env::flag(env::Var::launch_blocking, false));
    Setting seconds(env::Var::hang_report, value);
    CHECK(env::seconds(env::Var::hang_report, 20, true) == 20);
    Setting choice(env::Var::log_level, value);
    CHECK(env::choice(env::Var::log_level, {"debug", "info"}, 1) == 1);
    Setting bytes(env::Var::heap_size, value);
    CHECK(env::bytes(env::Var::heap_size, 4096) == 4096);
  }
}

TEST_CASE("flags are 0 or 1, nothing else", "[unit][env]") {
  {
    Setting on(env::Var::shared_gpu_warning, "1");
    CHECK(env::flag(env::Var::shared_gpu_warning, false));
  }
  {
    Setting off(env::Var::shared_gpu_warning, "0");
    CHECK_FALSE(env::flag(env::Var::shared_gpu_warning, true));
  }
  for (const char* value : {"off", "yes", "2", " 1"}) {
    Setting bad(env::Var::shared_gpu_warning, value);
    CHECK(refusal([] { env::flag(env::Var::shared_gpu_warning, true); }) ==
          std::string("IRIS_SHARED_GPU_WARNING must be 0 or 1, got '") + value + "'");
  }
}

TEST_CASE("whole numbers are read within their bounds, and the message says the bounds", "[unit][env]") {
  {
    Setting ok(env::Var::cpu_threads, "4096");
    CHECK(env::whole_number(env::Var::cpu_threads, 1, 4096, 1) == 4096);
  }
  for (const char* value : {"0", "4097", "many", "3.5", "-1", "12 "}) {
    Setting bad(env::Var::cpu_threads, value);
    CHECK(refusal([] { env::whole_number(env::Var::cpu_threads, 1, 4096, 1); }) ==
          std::string("IRIS_CPU_THREADS must be a whole number from 1 to 4096, got '") + value + "'");
  }
  {
    Setting events(env::Var::trace_events, "many");
    CHECK(refusal([] { env::whole_number(env::Var::trace_events, 1, 100000000, 0, "a whole number of events"); }) ==
          "IRIS_TRACE_EVENTS must be a whole number of events from 1 to 100000000, got 'many'");
  }
  {
    Setting largest(env::Var::cpu_memory_seed, "18446744073709551615");
    CHECK(env::whole_number(env::Var::cpu_memory_seed, 0, UINT64_MAX, 0) == UINT64_MAX);
  }
  {
    Setting beyond(env::Var::cpu_memory_seed, "18446744073709551616");
    CHECK(refusal([] { env::whole_number(env::Var::cpu_memory_seed, 0, UINT64_MAX, 0); }) ==
          "IRIS_CPU_MEMORY_SEED must be a whole number from 0 to 2^64-1, got '18446744073709551616'");
  }
}

TEST_CASE("seconds are decimal numbers; 0 is accepted only where it means never", "[unit][env]") {
  {
    Setting fraction(env::Var::wait_timeout, "0.25");
    CHECK(env::seconds(env::Var::wait_timeout, 10, false) == 0.25);
  }
  {
    Setting never(env::Var::hang_timeout, "0");
    CHECK(env::seconds(env::Var::hang_timeout, 300, true) == 0);
  }
  for (const char* value : {"0", "-1", "soon", "1e10", "nan"}) {
    Setting bad(env::Var::wait_timeout, value);
    CHECK(refusal([] { env::seconds(env::Var::wait_timeout, 10, false); }) ==
          std::string("IRIS_WAIT_TIMEOUT must be a number of seconds above 0, got '") + value + "'");
  }
  Setting negative(env::Var::hang_timeout, "-1");
  CHECK(refusal([] { env::seconds(env::Var::hang_timeout, 300, true); }) ==
        "IRIS_HANG_TIMEOUT must be a number of seconds (0: never), got '-1'");
}

TEST_CASE("a choice is one of its names, and the message lists them", "[unit][env]") {
  {
    Setting weak(env::Var::cpu_memory_model, "weak");
    CHECK(env::choice(env::Var::cpu_memory_model, {"tso", "weak"}, 0) == 1);
  }
  Setting level(env::Var::log_level, "loud");
  CHECK(refusal([] { env::choice(env::Var::log_level, {"debug", "info", "warning", "error"}, 2); }) ==
        "IRIS_LOG_LEVEL must be debug, info, warning or error, got 'loud'");
}

TEST_CASE("byte sizes take units; an unreadable one is an environment error naming the variable", "[unit][env]") {
  {
    Setting size(env::Var::heap_size, "512MiB");
    CHECK(env::bytes(env::Var::heap_size, 0) == 512ull << 20);
  }
  Setting bad(env::Var::heap_size, "lots");
  CHECK_THAT(refusal([] { env::bytes(env::Var::heap_size, 0); }), Catch::StartsWith("IRIS_HEAP_SIZE: cannot read 'lots'"));
}
