// The embeddable iris-lua host.
//
// A Host is one rank of an iris-lua job: a LuaJIT state with the `iris` module loaded, joined to the
// other ranks over MPI when a launcher started the process. `iris-lua` itself is a thin main over it
// (src/host/main.cpp); a C++ program can embed it the same way:
//
//   iris::Host host(iris::HostOptions{&argc, &argv});
//   host.add_function("answer", [](lua_State* L) { lua_pushinteger(L, 42); return 1; });
//   iris::RunResult r = host.run_string("print(answer(), iris.rank())");
//   if (!r.ok()) { std::cerr << host.describe(r); host.abort_job(r.exit_code); }
//   return host.finish();
//
// One Host per process: the ranks, the device and the symmetric heap belong to the process.
#pragma once

#include <string>
#include <vector>

struct lua_State;

namespace iris {

using LuaFunction = int (*)(lua_State*);

// What running a chunk produced. exit_code follows the command line's convention:
// 0 success, 1 script error, 2 usage or environment error (missing file, syntax error, no backend).
struct RunResult {
  int exit_code = 0;
  std::string message;    // "file:line: message" as Lua raised it
  std::string traceback;  // "stack traceback:\n\t..." (empty for usage errors)
  bool ok() const { return exit_code == 0; }
};

struct HostOptions {
  int* argc = nullptr;     // handed to MPI_Init when a launcher started the process
  char*** argv = nullptr;
  std::string program_name = "iris-lua";  // prefix of error lines: "iris-lua[rank 2]: ..."
};

class Host {
 public:
  explicit Host(const HostOptions& options = HostOptions{});
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  int rank() const;
  int world_size() const;
  lua_State* lua_state();

  // Adds a global Lua function.
  void add_function(const std::string& global_name, LuaFunction function);
  // Makes require(name) call `opener`, which returns the module (package.preload).
  void add_module(const std::string& name, LuaFunction opener);

  // Sets the global `arg` table as luajit does: arg[0] = script, arg[1..n] = args, arg[-k] = the
  // interpreter and its options (`interpreter_args`, in order).
  void set_script_args(const std::string& script, const std::vector<std::string>& args,
                       const std::vector<std::string>& interpreter_args = {});

  // Runs a file ("-" reads standard input) with `args` as its `...`. Protected: errors come back in
  // the result, with a traceback; a missing file or a syntax error has exit_code 2.
  RunResult run_file(const std::string& path, const std::vector<std::string>& args = {});
  RunResult run_string(const std::string& code, const std::string& chunk_name = "=(command line)");
  // require(name) and stores the result in the global `name` (as luajit's -l does).
  RunResult require_module(const std::string& name);
  // Calls the global function or module field `function_path` ("iris.repl.run") with string args.
  RunResult call(const std::string& function_path, const std::vector<std::string>& args = {});

  // "iris-lua[rank 2]: file:line: message\nstack traceback:..." for printing on stderr.
  std::string describe(const RunResult& result) const;

  // Ends every rank of the job now with `exit_code` (after this rank's message was printed).
  [[noreturn]] void abort_job(int exit_code);

  // Normal end: finishes device work, waits until every rank has finished, releases the heap and
  // MPI. Returns 0, or the exit code of a failure found while finishing (then it was printed).
  int finish();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace iris
