// The host C++ compiler (IRIS_CXX, default c++) builds kernels for the cpu backend into a shared object
// (with IRIS_CPU_MEMORY_MODEL's flags, part of its identity and so of every cache key):
//   - extern __shared__ declarations become IRIS_CPU_DYNAMIC_SHARED(type, name) (see cpu_shim.hpp);
//   - each exported kernel gets an extern "C" entry wrapper __iris_entry_<i>(void** args, state) that
//     unpacks the launch's argument block into the kernel's parameter types: template deduction on
//     &kernel<...> gives the types, and for a template it is the explicit instantiation too.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "compiler/compiler.hpp"
#include "compiler/cpu_source.hpp"
#include "compiler/files.hpp"
#include "compiler/guarded_child.hpp"
#include "core/activity.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace iris::compiler {
namespace {

// -fstack-clash-protection: a device thread overflowing its fiber's stack hits the guard below it.
// --wrap: a kernel's exit() or abort() is a device fault, not the end of the process (cpu_shim.hpp).
const char* const kFixedFlags[] = {"-O2", "-fPIC", "-shared", "-std=c++17", "-fvisibility=hidden",
                                   "-fstack-clash-protection",
                                   "-Wl,--wrap=exit,--wrap=_exit,--wrap=_Exit,--wrap=quick_exit,--wrap=abort"};

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The executable `name` resolves to through PATH (as posix_spawnp would find it), or "".
std::string resolve_executable(const std::string& name) {
  auto usable = [](const std::string& path) { return access(path.c_str(), X_OK) == 0; };
  if (name.find('/') != std::string::npos) return usable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (usable(candidate)) return candidate;
  }
  return "";
}

class CxxCompiler final : public Compiler {
 public:
  CxxCompiler() {
    command_ = split_words(env::get(env::Var::cxx).value_or("c++"));
    if (command_.empty()) command_ = {"c++"};
    model_flags_ = cpu_memory_model_flags();
  }

  const char* kind() const override { return "cxx"; }

  // Which compiler binary, without running it (a cache hit runs no compiler): its real path, size and
  // modification time, the rest of IRIS_CXX, and the fixed flags.
  const std::string& identity() override {
    if (!identity_.empty()) return identity_;
    const std::string found = resolve_executable(command_[0]);
    if (found.empty()) throw Error(Errc::environment, not_found_message());
    executable_ = found;
    char real[PATH_MAX];
    const std::string path = realpath(found.c_str(), real) != nullptr ? real : found;
    struct stat info {};
    stat(path.c_str(), &info);
    identity_ = format("cxx %s %lld %lld", path.c_str(), static_cast<long long>(info.st_size),
                       static_cast<long long>(info.st_mtime));
    for (size_t i = 1; i < command_.size(); ++i) identity_ += " " + command_[i];
    for (const char* flag : kFixedFlags) identity_ += std::string(" ") + flag;
    for (const std::string& flag : model_flags_) identity_ += " " + flag;
    return identity_;
  }

  CompiledCode compile(const CompileJob& job) override {
    count_compiler_invocation();
    CompiledCode out;
    std::string source = rewrite_dynamic_shared(job.source);
    source += "\n#line 1 \"<iris entry points>\"\n";
    for (size_t i = 0; i < job.names.size(); ++i) {
      const std::string symbol = format("__iris_entry_%zu", i);
      // Reserved parameter names: a kernel may well be called `state` or `args`.
      source += "IRIS_CPU_EXPORT void " + symbol + "(void** __iris_args, ::iris::abi::CpuThreadState* __iris_state) {\n" +
                "  ::iris::cpu::state = __iris_state;\n  ::iris::cpu::invoke(&" + job.names[i] + ", __iris_args);\n}\n";
      out.symbols.emplace_back(job.names[i], symbol);
    }

    identity();  // resolves the executable
    // One private directory per compile, the compiler's TMPDIR too, owned by a guardian process from
    // before it exists until after it is gone: nothing of the compile stays, however this process ends.
    make_directories(job.work_dir);
    const std::string scratch = job.work_dir + "/cxx-" + unique_suffix();
    std::vector<std::string> argv = command_;
    argv[0] = executable_;
    argv.insert(argv.end(), std::begin(kFixedFlags), std::end(kFixedFlags));
    argv.insert(argv.end(), model_flags_.begin(), model_flags_.end());
    argv.push_back("-I" + job.include_dir);
    argv.insert(argv.end(), job.options.begin(), job.options.end());
    for (const std::string& a : {std::string("-o"), scratch + "/kernel.so", std::string("-x"), std::string("c++"),
                                 scratch + "/kernel.cpp"}) {
      argv.push_back(a);
    }
    std::string log;
    bool wrote_object = false;
    // Watched as a wait for other ranks is while the compiler makes no progress (uses no CPU), without
    // asking for a report itself: a compiler that hangs ends the job after IRIS_HANG_TIMEOUT, one at
    // work never does, and a report another rank asks for says what this one compiles (the registry's
    // activity).
    const std::string compiling = activity::current().what;
    std::unique_ptr<activity::ProcessWait> watched;
    const int status = run_guarded({argv, {"TMPDIR=" + scratch}, scratch, {{"kernel.cpp", source}}, "log"},
                                   [&](int guardian) {
                                     interrupt::check("compiling a kernel");
                                     if (!watched) {
                                       watched = std::make_unique<activity::ProcessWait>(
                                           compiling.empty() ? std::string("compiling a kernel") : compiling,
                                           guardian, false);
                                     }
                                     watched->poll();
                                   },
                                   [&](const std::string& dir) {
                                     log = read_log(dir + "/log");
                                     wrote_object = read_file(dir + "/kernel.so", &out.code);
                                   });
    if (status != 0) throw Error(Errc::compile, log.empty() ? format("%s failed (status %d)", command_[0].c_str(), status) : log);
    if (!wrote_object) throw Error(Errc::compile, command_[0] + " wrote no shared object\n" + log);
    return out;
  }

 private:
  std::string not_found_message() const {
    return "the host C++ compiler '" + command_[0] +
           "' (IRIS_CXX) was not found: the cpu backend builds kernels with it; install g++ (Debian "
           "package g++) or set IRIS_CXX";
  }

  static std::string read_log(const std::string& path) {
    std::vector<uint8_t> bytes;
    if (!read_file(path, &bytes)) return "";
    std::string log(bytes.begin(), bytes.end());
    while (!log.empty() && log.back() == '\n') log.pop_back();
    return log;
  }

  std::vector<std::string> command_;
  std::vector<std::string> model_flags_;  // IRIS_CPU_MEMORY_MODEL's
  std::string executable_;  // command_[0] resolved through PATH
  std::string identity_;
};

}  // namespace

std::unique_ptr<Compiler> make_cxx_compiler() { return std::make_unique<CxxCompiler>(); }

}  // namespace iris::compiler
