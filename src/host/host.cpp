// The Host: one LuaJIT state per rank, everything run inside protected calls (as luajit.c does), errors
// returned with their traceback, Ctrl-C turned into a Lua error, and an orderly end across ranks.
#include "iris/host.hpp"

#include <lua.hpp>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

#include "comm/comm.hpp"
#include "comm/hang_report.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/job_end.hpp"
#include "core/log.hpp"
#include "core/process_keeper.hpp"
#include "host/user_frames.hpp"
#include "lua/embedded_lua.hpp"
#include "session/session.hpp"
#include "session/trace_session.hpp"

namespace iris {
namespace {

const char* kTracebackKey = "iris.host.last_traceback";
// iris.errors.traceback, once the iris module is loaded: the traceback without iris's own frames.
const char* kTracebackFunctionKey = "iris.host.traceback_function";

// The state a Ctrl-C interrupts (one Host per process). Atomic: the test runner's watchdog thread
// and the hang report's watcher read it too (interrupt::interrupt_script, comm/hang_report.hpp).
std::atomic<lua_State*> g_signal_state{nullptr};
// Keeps g_signal_state's Lua state open while the hang report's watcher sets a hook on it.
std::mutex g_hook_mutex;
// What the one debug hook does when it runs (any combination): raise "interrupted!" (Ctrl-C), raise
// interrupt::interrupt_script's message (unless withdrawn), answer the hang report's question.
std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_hang_answer_requested{false};
// The state a waiting C function was called from through call_waiting (only then may a wait look at
// the Lua stack: the call came through the interpreter, not from code the JIT compiled).
lua_State* g_inspectable_state = nullptr;

// The script's own frames of L's stack (host/user_frames.hpp), a line each; "" when there are none. A
// hang report asks: no error, so iris's frames go wherever they are.
std::string user_traceback(lua_State* L) {
  std::string text;
  for (const host::StackFrame& frame : host::user_frames(host::stack_of(L, 0), true)) text += frame.line + "\n";
  return text;
}

// iris.host.user_frames(level, deliberate [, outermost]): the lines of the user's frames from `level`
// (as debug.getinfo counts in the caller), for iris.errors.traceback.
int user_frames_for_lua(lua_State* L) {
  const int level = static_cast<int>(luaL_checkinteger(L, 1));
  const bool deliberate = lua_toboolean(L, 2) != 0;
  const int outermost = lua_isnoneornil(L, 3) ? 0 : 3;
  const auto frames = host::user_frames(host::stack_of(L, level, outermost), deliberate);
  lua_createtable(L, static_cast<int>(frames.size()), 0);
  for (size_t i = 0; i < frames.size(); ++i) {
    lua_pushlstring(L, frames[i].line.data(), frames[i].line.size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  return 1;
}

// iris.host.is_iris_chunk(source): whether a chunk (debug.getinfo's source) is one of iris's own.
int is_iris_chunk_for_lua(lua_State* L) {
  lua_pushboolean(L, host::is_iris_chunk(luaL_checkstring(L, 1)));
  return 1;
}

// iris.host.script_frames(entry, level, most): into entry[1..2n] the function and current line of the
// script's innermost `most` frames from stack level `level` on (the caller of this function is level
// 1), iris's own and C frames left out, ending at the script's main chunk; returns n. The call-line
// record of every collective (iris.collective_calls): one C call where debug.getinfo per level was one
// LuaJIT trace stitch and a table each. The frame's source is not copied: a report finds it from the
// function (pushing each frame's short source as a string was a third of a collective's Lua policy).
int script_frames_for_lua(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int level = static_cast<int>(luaL_checkinteger(L, 2));
  const int most = static_cast<int>(luaL_checkinteger(L, 3));
  int n = 0;
  lua_Debug ar;
  for (; n < most && lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Slf", &ar) == 0) continue;  // pushes the function
    if (*ar.what == 'C' || host::is_iris_chunk(ar.source)) {
      lua_pop(L, 1);
      continue;
    }
    lua_rawseti(L, 1, 2 * n + 1);
    lua_pushinteger(L, ar.currentline);
    lua_rawseti(L, 1, 2 * n + 2);
    ++n;
    if (*ar.what == 'm') break;  // the frames above a main chunk are the runner's
  }
  lua_pushinteger(L, n);
  return 1;
}

void host_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);  // before the flags: a request arriving now arms the hook again
  if (g_hang_answer_requested.exchange(false)) comm::hang::answer_from_lua(user_traceback(L));
  if (g_stop_requested.exchange(false)) luaL_error(L, "interrupted!");
  const char* message = interrupt::take_script_message();
  if (message == nullptr) return;  // withdrawn: the code it was meant for has ended
  lua_pushstring(L, message);
  lua_error(L);
}

void arm_hook(lua_State* L) { lua_sethook(L, host_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1); }

void sample_compiled_lua();

void on_interrupt(int signal_number) {
  ::signal(signal_number, SIG_DFL);  // a second Ctrl-C ends the process the default way
  g_stop_requested.store(true);
  interrupt::request();
  lua_State* L = g_signal_state.load();
  if (L != nullptr) arm_hook(L);
  sample_compiled_lua();  // a loop the JIT compiled leaves its trace for the hook
}

// interrupt::interrupt_script's way into the running Lua code. It may run in a signal handler (the
// REPL's Ctrl-C), so it takes no lock, as on_interrupt does.
void notify_script() {
  lua_State* L = g_signal_state.load();
  if (L != nullptr) arm_hook(L);
  sample_compiled_lua();
}

// The hang report's watcher asks where this rank's Lua code is (comm/hang_report.hpp).
void request_hang_answer() {
  std::lock_guard<std::mutex> lock(g_hook_mutex);
  lua_State* L = g_signal_state.load();
  if (L == nullptr) return;
  g_hang_answer_requested.store(true);
  arm_hook(L);
}

std::string waiting_traceback() { return g_inspectable_state != nullptr ? user_traceback(g_inspectable_state) : ""; }

// A loop the JIT compiled never runs a hook, so request_hang_answer's hook cannot answer for it. LuaJIT's
// own profiler can: started in mode 'l' (start_sampler), every trace compiled from then on checks at each
// new line whether a sample is due and leaves the trace to take it, and the sample's callback
// (answer_from_sample) sees the whole stack of the thread it interrupted. The profiler is started with
// an interval too long ever to fire (its timer counts CPU time), so it costs nothing until a hang report
// asks: then its timer is set to fire now (sample_compiled_lua) and put back once the answer is written.
std::atomic<bool> g_sampler_started{false};
std::atomic<bool> g_sample_due{false};  // the timer was set to fire now
constexpr long kIdleSampleSeconds = 100000;

void set_sample_timer(long seconds, long microseconds) {
  struct itimerval timer {};
  timer.it_value.tv_sec = seconds;
  timer.it_value.tv_usec = microseconds;
  timer.it_interval = timer.it_value;
  setitimer(ITIMER_PROF, &timer, nullptr);
}

// Async-signal-safe (Ctrl-C's handler calls it): setitimer and atomics only.
void sample_compiled_lua() {
  if (!g_sampler_started.load()) return;
  g_sample_due.store(true);
  set_sample_timer(0, 2000);
}

// iris.host.stop_sampler(): stops the idle profiler (before -jv, -jdump or -jp start: its stop flushes
// every trace, which they would report, and -jp takes the profiler).
int stop_sampler(lua_State* L) {
  if (!g_sampler_started.exchange(false)) return 0;
  luaL_dostring(L, "require('jit.profile').stop()");
  return 0;
}

// The profiler's callback (through start_sampler's Lua function): thread = the coroutine it interrupted.
// Leaving the trace for the sample is what a stop needs too: the hook armed for Ctrl-C (or a test's
// timeout) runs at the next instruction the interpreter executes, right after this returns.
int answer_from_sample(lua_State* L) {
  if (g_sample_due.exchange(false)) set_sample_timer(kIdleSampleSeconds, 0);
  lua_State* thread = lua_tothread(L, 1);
  if (thread != nullptr && g_hang_answer_requested.exchange(false)) comm::hang::answer_from_lua(user_traceback(thread));
  return 0;
}

// call_waiting(f, ...): calls f (a C function through the FFI that may wait for other ranks) so that
// the wait may show this rank's Lua traceback in a hang report. A lua_CFunction is always called by
// the interpreter (code the JIT compiled stitches around it), so the stack is whole while f waits.
int call_waiting(lua_State* L) {
  lua_State* outer = g_inspectable_state;
  g_inspectable_state = L;
  const int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  g_inspectable_state = outer;
  if (status != 0) return lua_error(L);
  return lua_gettop(L);
}

// Message handler for every protected call: keeps the message as the error value and stores the
// traceback beside it, so callers can print either. The traceback is iris.errors.traceback's (the
// user's frames; none for a usage error), or LuaJIT's own when that cannot be had.
int message_handler(lua_State* L) {
  if (!lua_isstring(L, 1)) {
    if (lua_isnoneornil(L, 1) || !luaL_callmeta(L, 1, "__tostring") || !lua_isstring(L, -1)) {
      lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kTracebackFunctionKey);
  if (lua_isfunction(L, -1)) {
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 2);  // the frame that raised the error: the caller of this handler's caller
    if (lua_pcall(L, 2, 1, 0) == 0 && lua_isstring(L, -1)) {
      lua_setfield(L, LUA_REGISTRYINDEX, kTracebackKey);
      return 1;
    }
  }
  lua_settop(L, 1);
  luaL_traceback(L, L, nullptr, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kTracebackKey);
  return 1;
}

// How the Host of this process ends its rank from inside the Lua state (os_exit below): Impl::finish
// without closing the state it is called from.
std::function<void(const std::string& how, int exit_code)> g_finish_from_lua;

// os.exit([code]): LuaJIT's would end this process alone, without MPI_Finalize (mpirun then reports
// that the job ended improperly and exits 1), without writing the trace and without telling the other
// ranks (still running, they would wait for this one). It ends the rank as the end of its script does
// (Host::finish), then exits with `code`: every rank calling it ends the job cleanly, and a rank still
// waiting in a collective for one that called it is told which rank called os.exit at which line. The
// REPL and the test runner put their own os.exit in place while they run a chunk or a case.
int os_exit(lua_State* L) {
  int code = EXIT_SUCCESS;
  std::string given;
  if (lua_isboolean(L, 1)) {
    code = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
    given = code == EXIT_SUCCESS ? "true" : "false";
  } else if (!lua_isnoneornil(L, 1)) {
    code = static_cast<int>(luaL_checkinteger(L, 1));
    given = std::to_string(code);
  }
  luaL_where(L, 1);
  std::string where = lua_tostring(L, -1);  // "s.lua:5: ", or "" from C
  while (!where.empty() && (where.back() == ' ' || where.back() == ':')) where.pop_back();
  std::string how = "called os.exit(" + given + ")";
  if (!where.empty()) how += " at " + where;
  std::fflush(stdout);
  if (g_finish_from_lua) g_finish_from_lua(how, code);
  std::fflush(nullptr);
  std::_Exit(code);
}

int load_embedded_module(lua_State* L) {
  const auto* module = static_cast<const lua::EmbeddedLuaModule*>(lua_touserdata(L, lua_upvalueindex(1)));
  std::string chunk_name = std::string("@") + module->path;
  if (luaL_loadbuffer(L, reinterpret_cast<const char*>(module->bytecode), module->size, chunk_name.c_str()) != 0) {
    return lua_error(L);
  }
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

}  // namespace

struct Host::Impl {
  HostOptions options;
  std::unique_ptr<comm::Comm> comm;
  lua_State* L = nullptr;
  bool finished = false;

  std::string describe(const RunResult& result) const {
    std::string text = format("%s[rank %d]: %s", options.program_name.c_str(), comm->rank(), result.message.c_str());
    if (!result.traceback.empty()) text += "\n" + result.traceback;
    return text;
  }

  // The orderly end of this rank (Host::finish): its device work waited for, the trace written (its
  // last event saying `how` the rank ended, "called os.exit(3) at s.lua:5", and `exit_code`), the Lua
  // state closed (unless the end comes from inside it: os.exit), the other ranks told how it ended and
  // waited for, the heap freed, MPI finalized. A failure on the way ends the whole job.
  void finish(const std::string& how, int exit_code, bool close_lua) {
    if (finished) return;
    finished = true;
    try {
      session::synchronize_if_initialized();
      // Collective: every rank that ends normally gets here.
      session::trace_finish_job(how.empty() ? how : format("rank %d %s", comm->rank(), how.c_str()), exit_code);
    } catch (const Error& e) {
      RunResult failure{exit_code_of(e.code()), e.what(), ""};
      // A fault the script already heard of was printed with its line (or handled there): once is enough.
      if (!(e.code() == Errc::device_fault && session::fault_reported())) {
        std::fprintf(stderr, "%s\n", describe(failure).c_str());
      }
      job_end::failed(format("rank %d failed at the end of the job: %s", comm->rank(), e.what()), failure.exit_code);
      comm->abort(failure.exit_code);
    }
    comm::hang::set_lua_sources(nullptr, nullptr);
    if (close_lua) {
      // Tensors still alive are released by their finalizers here; releasing is local, never collective.
      lua_close(L);
      L = nullptr;
    }
    try {
      comm->finish(how);
      session::shutdown();
      comm->finalize();
    } catch (const Error& e) {
      RunResult failure{exit_code_of(e.code()), e.what(), ""};
      std::fprintf(stderr, "%s\n", describe(failure).c_str());
      job_end::failed(format("rank %d failed at the end of the job: %s", comm->rank(), e.what()), failure.exit_code);
      comm->abort(failure.exit_code);
    }
    std::fflush(stdout);
  }

  // Runs the function below `nargs` arguments on the stack, protected. Leaves nothing on the stack.
  // With `result_is_exit_code`, an integer the function returns becomes the result's exit code.
  RunResult protected_call(int nargs, bool result_is_exit_code = false) {
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    g_signal_state = L;
    ::signal(SIGINT, on_interrupt);
    int status = lua_pcall(L, nargs, 1, base);
    ::signal(SIGINT, SIG_DFL);
    {
      std::lock_guard<std::mutex> lock(g_hook_mutex);
      g_signal_state = nullptr;
    }
    g_stop_requested.store(false);
    interrupt::clear();
    RunResult result;
    if (status != 0) {
      result.message = lua_isstring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)";
      lua_getfield(L, LUA_REGISTRYINDEX, kTracebackKey);
      if (lua_isstring(L, -1)) result.traceback = lua_tostring(L, -1);
      lua_pop(L, 1);
      result.exit_code = exit_code_for(result.message);
    } else if (result_is_exit_code && lua_isnumber(L, -1)) {
      result.exit_code = static_cast<int>(lua_tointeger(L, -1));
    }
    lua_settop(L, base - 1);
    return result;
  }

  // Errors raised by the iris module remember their kind (iris.errors); its exit code is errors.def's.
  int exit_code_for(const std::string& message) {
    int top = lua_gettop(L);
    std::string kind = "internal";
    lua_getglobal(L, "require");
    lua_pushliteral(L, "iris.errors");
    if (lua_pcall(L, 1, 1, 0) == 0) {
      lua_getfield(L, -1, "kind");
      lua_pushlstring(L, message.data(), message.size());
      if (lua_pcall(L, 1, 1, 0) == 0 && lua_isstring(L, -1)) kind = lua_tostring(L, -1);
    }
    lua_settop(L, top);
    return exit_code_of(errc_named(kind));
  }

  RunResult load_failure(int status) {
    RunResult result;
    result.exit_code = 2;  // missing file or syntax error: a usage error, nothing ran
    result.message = lua_isstring(L, -1) ? lua_tostring(L, -1) : "cannot load chunk";
    // Lua 5.3's operators, which LuaJIT (Lua 5.1) does not have: say what to write instead.
    for (const char* op : {"near '/'", "near '&'", "near '|'", "near '~'", "near '<<'", "near '>>'"}) {
      if (result.message.find(op) != std::string::npos) {
        result.message += " (scripts are LuaJIT, Lua 5.1's syntax: no //, &, |, ~, << or >> operators; "
                          "math.floor(a / b), bit.band(a, b), bit.bor, bit.bxor, bit.lshift, bit.rshift)";
        break;
      }
    }
    (void)status;
    lua_pop(L, 1);
    return result;
  }
};

Host::Host(const HostOptions& options) : impl_(new Impl) {
  impl_->options = options;
  keeper::start();  // first: a small single-threaded process to fork, before MPI
  g_finish_from_lua = [impl = impl_](const std::string& how, int exit_code) { impl->finish(how, exit_code, false); };
  // Under mpirun stdout is a pipe; line buffering keeps each rank's lines whole and timely.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  log::configure_from_environment();
  impl_->comm = comm::Comm::create(options.argc, options.argv);
  session::attach_comm(impl_->comm.get());
  interrupt::set_script_notifier(notify_script);
  log::set_rank(impl_->comm->rank(), impl_->comm->size());

  lua_State* L = luaL_newstate();
  if (L == nullptr) throw Error(Errc::environment, "cannot create the Lua state: out of memory");
  impl_->L = L;
  luaL_openlibs(L);
  lua_getglobal(L, "os");
  lua_pushcfunction(L, os_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  for (const lua::EmbeddedLuaModule* m = lua::kEmbeddedLuaModules; m->name != nullptr; ++m) {
    lua_pushlightuserdata(L, const_cast<lua::EmbeddedLuaModule*>(m));
    lua_pushcclosure(L, load_embedded_module, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 2);
  // iris.host: what the iris module needs from the host itself.
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_createtable(L, 0, 4);
  lua_pushcfunction(L, call_waiting);
  lua_setfield(L, -2, "call_waiting");
  lua_pushcfunction(L, user_frames_for_lua);
  lua_setfield(L, -2, "user_frames");
  lua_pushcfunction(L, is_iris_chunk_for_lua);
  lua_setfield(L, -2, "is_iris_chunk");
  lua_pushcfunction(L, script_frames_for_lua);
  lua_setfield(L, -2, "script_frames");
  lua_pushcfunction(L, stop_sampler);
  lua_setfield(L, -2, "stop_sampler");
  lua_setfield(L, -2, "iris.host");
  lua_pop(L, 2);
  comm::hang::set_lua_sources(waiting_traceback, request_hang_answer, sample_compiled_lua);
  RunResult loaded = require_module("iris");
  if (!loaded.ok()) throw Error(Errc::internal, "cannot load the iris module: " + loaded.message + "\n" + loaded.traceback);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "iris.errors");
  if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
    lua_getfield(L, -1, "traceback");
    lua_setfield(L, LUA_REGISTRYINDEX, kTracebackFunctionKey);
  }
  lua_settop(L, 0);
  // The sampler's checks in compiled traces cost nothing measurable (docs/perf.md); a script that starts
  // jit.profile itself takes the profiler over.
  {
    static const char* kStartSampler =
        "local answer, interval_ms = ...\n"
        "local ok, profile = pcall(require, 'jit.profile')\n"
        "if not ok then return false end\n"
        "profile.start('li' .. interval_ms, function(thread) answer(thread) end)\n"
        "return true";
    luaL_loadbuffer(L, kStartSampler, std::strlen(kStartSampler), "=(hang report sampler)");
    lua_pushcfunction(L, answer_from_sample);
    lua_pushinteger(L, kIdleSampleSeconds * 1000);
    if (lua_pcall(L, 2, 1, 0) == 0 && lua_toboolean(L, -1)) g_sampler_started.store(true);
    lua_settop(L, 0);
  }
}

Host::~Host() {
  g_finish_from_lua = nullptr;
  comm::hang::set_lua_sources(nullptr, nullptr);
  if (impl_->L != nullptr) lua_close(impl_->L);
  delete impl_;
}

int Host::rank() const { return impl_->comm->rank(); }
int Host::world_size() const { return impl_->comm->size(); }
lua_State* Host::lua_state() { return impl_->L; }

void Host::add_function(const std::string& global_name, LuaFunction function) {
  lua_pushcfunction(impl_->L, function);
  lua_setglobal(impl_->L, global_name.c_str());
}

void Host::add_module(const std::string& name, LuaFunction opener) {
  lua_State* L = impl_->L;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, opener);
  lua_setfield(L, -2, name.c_str());
  lua_pop(L, 2);
}

void Host::set_script_args(const std::string& script, const std::vector<std::string>& args,
                           const std::vector<std::string>& interpreter_args) {
  lua_State* L = impl_->L;
  lua_createtable(L, static_cast<int>(args.size()), static_cast<int>(interpreter_args.size()) + 1);
  int k = -static_cast<int>(interpreter_args.size());
  for (const auto& a : interpreter_args) {
    lua_pushstring(L, a.c_str());
    lua_rawseti(L, -2, k++);
  }
  lua_pushstring(L, script.c_str());
  lua_rawseti(L, -2, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    lua_pushstring(L, args[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i) + 1);
  }
  lua_setglobal(L, "arg");
}

RunResult Host::run_file(const std::string& path, const std::vector<std::string>& args) {
  lua_State* L = impl_->L;
  int status = luaL_loadfile(L, path == "-" ? nullptr : path.c_str());
  if (status != 0) return impl_->load_failure(status);
  for (const auto& a : args) lua_pushstring(L, a.c_str());
  return impl_->protected_call(static_cast<int>(args.size()));
}

RunResult Host::run_string(const std::string& code, const std::string& chunk_name) {
  lua_State* L = impl_->L;
  int status = luaL_loadbuffer(L, code.data(), code.size(), chunk_name.c_str());
  if (status != 0) return impl_->load_failure(status);
  return impl_->protected_call(0);
}

RunResult Host::require_module(const std::string& name) {
  lua_State* L = impl_->L;
  // As luajit -l: require called from C (so its message carries no chunk position), result stored
  // in the global of the same name.
  lua_pushcfunction(L, [](lua_State* L) {
    lua_getglobal(L, "require");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_setglobal(L, lua_tostring(L, 1));
    return 0;
  });
  lua_pushstring(L, name.c_str());
  return impl_->protected_call(1);
}

RunResult Host::call(const std::string& function_path, const std::vector<std::string>& args) {
  lua_State* L = impl_->L;
  // "iris.repl.run": require the longest module prefix that loads, then index the rest.
  static const char* kResolve =
      "local path = ...\n"
      "local module, field = path:match('^(.*)%.([^.]+)$')\n"
      "local owner = module and require(module) or _G\n"
      "local fn = owner[field or path]\n"
      "if type(fn) ~= 'function' then error(path .. ' is not a function', 0) end\n"
      "return fn(select(2, ...))";
  luaL_loadbuffer(L, kResolve, std::char_traits<char>::length(kResolve), "=(host)");
  lua_pushstring(L, function_path.c_str());
  for (const auto& a : args) lua_pushstring(L, a.c_str());
  return impl_->protected_call(static_cast<int>(args.size()) + 1, /*result_is_exit_code=*/true);
}

std::string Host::describe(const RunResult& result) const { return impl_->describe(result); }

void Host::abort_job(int exit_code) { impl_->comm->abort(exit_code); }

int Host::finish() {
  impl_->finish("", 0, true);
  return 0;
}

}  // namespace iris
