#include "host/cli.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "comm/launcher.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/job_end.hpp"
#include "host/environment_check.hpp"
#include "iris/host.hpp"
#include "iris/version.hpp"
#include "lua/embedded_lua.hpp"
#include "session/trace_session.hpp"

namespace iris::cli {
namespace {

const char* kUsage =
    "usage: iris-lua [options] [script [args...]]\n"
    "       iris-lua COMMAND [args...]      (COMMAND --help describes its arguments)\n"
    "       mpirun -np N iris-lua [options] [script [args...]]\n";

const char* kOptions =
    "options:\n"
    "  -e chunk     run the string 'chunk'\n"
    "  -l name      require library 'name' into the global 'name'\n"
    "  -j cmd       perform a LuaJIT control command: -jon, -joff, -jflush, -jv, -jdump=file (jit.* modules)\n"
    "  -O[opt]      control the LuaJIT optimizations: -O3, -O0, -Ohotloop=10, -O+fold,-dce (jit.opt.start)\n"
    "  -i           enter the interactive REPL after running the script\n"
    "  --trace FILE write a trace of the whole job to FILE (as IRIS_TRACE=FILE; docs/tracing.md)\n"
    "  --warm       compile iris's library kernels (collectives, fused ops, ...) ahead, into the kernel cache\n"
    "               (as `iris-lua warm`; `iris-lua warm --help` for its options)\n"
    "  -v, --version  print the version\n"
    "  -h, --help   print this help\n"
    "  --           stop handling options\n"
    "  -            run standard input as the script\n"
    "With no script and no -e, iris-lua opens the REPL (on a terminal with line editing; from a pipe it\n"
    "runs the chunks in order without prompts). LUA_INIT (or LUA_INIT_5_1) runs first, as in luajit.\n";

// What the command line asks for, in the order luajit does it: -l and -e in order, the script, then -i.
struct Plan {
  struct Step {
    char kind;  // 'e', 'l', 'j' or 'O'
    std::string text;
  };
  std::vector<Step> steps;
  bool has_script = false;
  std::string script;
  std::vector<std::string> script_args;
  std::vector<std::string> interpreter_args;  // arg[-k]
  bool interactive = false;
  bool version = false;
  bool help = false;
  std::string command;  // a subcommand: the Lua module iris.cmd.<command>
  std::vector<std::string> command_args;
};

// The subcommands this binary has, "test, ...": the embedded modules iris.cmd.*.
std::string command_names() {
  const std::string prefix = lua::kCommandPrefix;
  std::string names;
  for (const lua::EmbeddedLuaModule* m = lua::kEmbeddedLuaModules; m->name != nullptr; ++m) {
    if (std::strncmp(m->name, prefix.c_str(), prefix.size()) == 0) {
      names += (names.empty() ? "" : ", ") + std::string(m->name + prefix.size());
    }
  }
  return names;
}

// Only one rank prints usage errors, so `mpirun -np 8 iris-lua -x` says it once.
bool is_first_rank() { return comm::launcher_rank().value_or(0) == 0; }

int usage_error(const std::string& message) {
  if (is_first_rank()) std::fprintf(stderr, "iris-lua: %s\n%s", message.c_str(), kUsage);
  return exit_code_of(Errc::usage);
}

// A first word that is neither a file nor a subcommand but close to one's name ("tset"): the command
// that was meant, or "".
std::string meant_command(const std::string& word) {
  struct stat info;
  if (word.empty() || word[0] == '-' || word.find_first_of("./") != std::string::npos || ::stat(word.c_str(), &info) == 0) {
    return "";
  }
  const std::string prefix = lua::kCommandPrefix;
  std::vector<std::string> commands;
  for (const lua::EmbeddedLuaModule* m = lua::kEmbeddedLuaModules; m->name != nullptr; ++m) {
    if (std::strncmp(m->name, prefix.c_str(), prefix.size()) == 0) commands.push_back(m->name + prefix.size());
  }
  return host::nearest_name(word, commands);
}

// Returns 0 on success, else the exit code of a usage error (already printed).
int parse(int argc, char** argv, Plan* plan) {
  // A first word that names a subcommand runs it, as luajit's -jNAME runs jit.NAME; any other word is
  // the script.
  if (argc > 1 && lua::find_embedded_module(lua::kCommandPrefix + std::string(argv[1])) != nullptr) {
    plan->command = argv[1];
    for (int k = 2; k < argc; ++k) plan->command_args.push_back(argv[k]);
    return 0;
  }
  // --warm is the subcommand warm, as an option (issue 27: how the library kernels compile ahead).
  if (argc > 1 && std::strcmp(argv[1], "--warm") == 0) {
    plan->command = "warm";
    for (int k = 2; k < argc; ++k) plan->command_args.push_back(argv[k]);
    return 0;
  }
  if (argc > 1) {
    if (const std::string meant = meant_command(argv[1]); !meant.empty()) {
      return usage_error(format("'%s' is neither a script nor a command: did you mean 'iris-lua %s'? (commands: %s)",
                                argv[1], meant.c_str(), command_names().c_str()));
    }
  }
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a.empty() || a[0] != '-' || a == "-") break;  // the script ("-": standard input)
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      plan->help = true;
    } else if (a == "-v" || a == "--version") {
      plan->version = true;
    } else if (a == "-i") {
      plan->interactive = true;
    } else if (a == "--trace" || a.rfind("--trace=", 0) == 0) {
      std::string file = a.size() > 7 ? a.substr(8) : "";
      if (a == "--trace") {
        if (i + 1 >= argc) return usage_error("option '--trace' needs a file: --trace trace.json");
        file = argv[++i];
      }
      if (file.empty()) return usage_error("option '--trace' needs a file: --trace trace.json");
      setenv("IRIS_TRACE", file.c_str(), 1);  // one way in: the same as IRIS_TRACE=FILE
    } else if (a[1] == 'e' || a[1] == 'l' || a[1] == 'j') {
      std::string text = a.substr(2);  // "-eCODE" or "-e CODE", as luajit accepts
      if (text.empty()) {
        if (i + 1 >= argc) return usage_error("option '" + a + "' needs an argument");
        text = argv[++i];
      }
      plan->steps.push_back({a[1], text});
    } else if (a[1] == 'O') {
      plan->steps.push_back({'O', a.substr(2)});  // "-O" alone: the default level, as luajit
    } else {
      return usage_error("unknown option '" + a + "'");
    }
  }
  for (int k = 0; k < i; ++k) plan->interpreter_args.push_back(argv[k]);
  if (i < argc) {
    plan->has_script = true;
    plan->script = argv[i];
    for (int k = i + 1; k < argc; ++k) plan->script_args.push_back(argv[k]);
  }
  return 0;
}

void print_help() {
  std::printf("iris-lua %s: Lua scripts that program several GPUs as one\n\n%s\n%s\ncommands: %s\n\nenvironment:\n",
              IRIS_LUA_VERSION, kUsage, kOptions, command_names().c_str());
  size_t count = 0;
  const env::Info* vars = env::all(&count);
  for (size_t k = 0; k < count; ++k) {
    std::printf("  %-20s %s (default: %s)\n", vars[k].name, vars[k].description, vars[k].default_value);
  }
  std::printf("\nexit codes: 0 success, 1 script error or failed tests, 2 usage or environment error\n");
}

// LUA_INIT_5_1, else LUA_INIT, before the command line's chunks, as luajit runs LUA_INIT: "@file" runs
// the file, anything else is a chunk named after the variable.
RunResult run_lua_init(Host& host) {
  env::Var var = env::Var::lua_init_5_1;
  std::optional<std::string> init = env::get(var);
  if (!init) init = env::get(var = env::Var::lua_init);
  if (!init) return RunResult{};
  if ((*init)[0] == '@') return host.run_file(init->substr(1));
  return host.run_string(*init, std::string("=") + env::info(var).name);
}

// One step of the command line, in order: -e, -l, and -j/-O, which iris.luajit_options performs as
// luajit does (jit.on, jit.opt.start, a jit.* module's start).
RunResult run_step(Host& host, const Plan::Step& step) {
  switch (step.kind) {
    case 'e': return host.run_string(step.text);
    case 'l': return host.require_module(step.text);
    case 'j': return host.call("iris.luajit_options.jit_command", {step.text});
    default: return host.call("iris.luajit_options.optimize", {step.text});
  }
}

// Prints a failure and ends the job: with several ranks the others may be blocked on this one, so
// the whole job ends now; alone, the host finishes normally first.
int fail(Host& host, const RunResult& result) {
  std::fprintf(stderr, "%s\n", host.describe(result).c_str());
  std::fflush(stderr);
  // A trace that is on is written with a last event saying how the job ended (docs/tracing.md).
  const std::string how = format("rank %d failed: %s", host.rank(), result.message.c_str());
  if (host.world_size() > 1) {
    job_end::failed(how, result.exit_code);
    host.abort_job(result.exit_code);
  }
  session::trace_note_job_end(how, result.exit_code);
  host.finish();
  return result.exit_code;
}

// The end of a run whose last step is a Lua function that returns the exit code (a subcommand, the
// REPL): an error it raised ends the job as a script's does; else its code, unless finishing fails.
int finish_after(Host& host, const RunResult& result) {
  if (!result.ok() && !result.message.empty()) return fail(host, result);
  int finish_code = host.finish();
  return result.exit_code != 0 ? result.exit_code : finish_code;
}

}  // namespace

int main(int argc, char** argv) {
  Plan plan;
  if (int rc = parse(argc, argv, &plan)) return rc;
  if (plan.help) {
    print_help();
    return 0;
  }
  if (plan.version) {
    std::printf("iris-lua %s\n", IRIS_LUA_VERSION);
    return 0;
  }

  try {
    // Every IRIS_* variable is read now, so a bad value ends the job before anything runs (rank 0 says so).
    for (const std::string& warning : host::check_environment()) {
      if (is_first_rank()) std::fprintf(stderr, "iris-lua: warning: %s\n", warning.c_str());
    }
  } catch (const Error& e) {
    if (is_first_rank()) std::fprintf(stderr, "iris-lua: %s\n", e.what());
    return exit_code_of(e.code());
  }

  try {
    Host host(HostOptions{&argc, &argv, "iris-lua"});
    // IRIS_TRACE (or --trace): the trace starts before anything else runs, on every rank.
    if (RunResult r = host.call("iris.trace.start_requested"); !r.ok()) return fail(host, r);
    if (!plan.command.empty()) {
      return finish_after(host, host.call(lua::kCommandPrefix + plan.command + ".main", plan.command_args));
    }
    host.set_script_args(plan.has_script ? plan.script : "", plan.script_args, plan.interpreter_args);
    if (RunResult r = run_lua_init(host); !r.ok()) return fail(host, r);
    for (const auto& step : plan.steps) {
      RunResult r = run_step(host, step);
      if (!r.ok()) return fail(host, r);
    }
    if (plan.has_script) {
      RunResult r = host.run_file(plan.script, plan.script_args);
      if (!r.ok()) return fail(host, r);
    }
    bool repl = plan.interactive || (!plan.has_script && plan.steps.empty());
    if (repl) return finish_after(host, host.call("iris.repl.run", {isatty(STDIN_FILENO) ? "terminal" : "pipe"}));
    // The device work the script left: a fault found now is reported as the script's (its line).
    if (RunResult r = host.call("iris.context.synchronize_at_end"); !r.ok()) return fail(host, r);
    return host.finish();
  } catch (const Error& e) {
    // Starting the host failed (MPI, the Lua state): nothing else has run yet.
    std::fprintf(stderr, "iris-lua: %s\n", e.what());
    return exit_code_of(e.code());
  }
}

}  // namespace iris::cli
