#include "compiler/rtc_compiler.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/error.hpp"
#include "core/dynamic_library.hpp"

namespace iris::compiler {
namespace {

// The NVRTC/hiprtc functions iris uses; every result is an int status, 0 on success.
struct RtcApi {
  using Program = void*;
  int (*version)(int*, int*);
  const char* (*error_string)(int);
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  int (*destroy)(Program*);
  int (*add_name_expression)(Program, const char*);
  int (*compile)(Program, int, const char* const*);
  int (*log_size)(Program, size_t*);
  int (*log)(Program, char*);
  int (*code_size)(Program, size_t*);
  int (*code)(Program, char*);
  int (*lowered_name)(Program, const char*, const char**);
};

std::atomic<int> g_compiles_in_flight{0};

// The exit-time hook of CompileInFlight (rtc_compiler.hpp).
void end_by_the_signal_being_handled() {
  if (g_compiles_in_flight.load() == 0) return;
  sigset_t blocked;
  if (pthread_sigmask(SIG_BLOCK, nullptr, &blocked) != 0) return;
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    if (sigismember(&blocked, signal_number) != 1) continue;
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);  // pending while blocked; unblocked, it ends the process
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  }
}

class RtcCompiler final : public Compiler {
 public:
  explicit RtcCompiler(RtcFlavor flavor) : flavor_(std::move(flavor)) {}

  const char* kind() const override { return flavor_.kind; }

  const std::string& identity() override {
    load();
    return identity_;
  }

  CompiledCode compile(const CompileJob& job) override {
    load();
    count_compiler_invocation();
    std::vector<std::string> options = flavor_.job_flags(library_path_, job);
    options.insert(options.end(), flavor_.fixed_flags.begin(), flavor_.fixed_flags.end());
    options.insert(options.end(), job.options.begin(), job.options.end());
    std::vector<const char*> option_pointers;
    for (const std::string& o : options) option_pointers.push_back(o.c_str());

    RtcApi::Program program = nullptr;
    check(api_.create(&program, job.source.c_str(), "kernel.hip", 0, nullptr, nullptr), "create a program");
    struct Destroy {
      const RtcApi& api;
      RtcApi::Program& program;
      ~Destroy() { api.destroy(&program); }
    } destroy{api_, program};
    std::vector<std::string> alternatives;
    for (const std::string& name : job.names) {
      check(api_.add_name_expression(program, name.c_str()), "add the name " + name);
      alternatives.push_back(flavor_.alternative_name ? flavor_.alternative_name(name) : name);
      if (alternatives.back() != name) {
        check(api_.add_name_expression(program, alternatives.back().c_str()), "add the name " + alternatives.back());
      }
    }

    int status;
    {
      const CompileInFlight in_flight;
      status = api_.compile(program, static_cast<int>(option_pointers.size()), option_pointers.data());
    }
    if (status != 0) {
      std::string log = program_log(program);
      if (log.empty()) log = api_.error_string(status);
      throw Error(Errc::compile, log);
    }
    CompiledCode out;
    size_t size = 0;
    check(api_.code_size(program, &size), "get the code size");
    out.code.resize(size);
    check(api_.code(program, reinterpret_cast<char*>(out.code.data())), "get the code");
    for (size_t i = 0; i < job.names.size(); ++i) {
      const char* lowered = nullptr;
      if (api_.lowered_name(program, job.names[i].c_str(), &lowered) != 0 || lowered == nullptr) {
        check(api_.lowered_name(program, alternatives[i].c_str(), &lowered),
              "find the kernel " + job.names[i] + " (spell its template arguments as built-in types)");
      }
      out.symbols.emplace_back(job.names[i], lowered);
    }
    return out;
  }

 private:
  void load() {
    if (!identity_.empty()) return;  // loaded completely (a failed load leaves it empty, and is retried)
    const std::string create = std::string(flavor_.prefix) + "CreateProgram";
    auto library = DynamicLibrary::open(flavor_.library_candidates, flavor_.what, flavor_.missing_hint);
    void* create_function = library.symbol(create.c_str());
    if (create_function == nullptr) {
      throw Error(Errc::environment, format("%s: %s has no %s; %s", flavor_.what.c_str(), library.name().c_str(),
                                            create.c_str(), flavor_.missing_hint.c_str()));
    }
    Dl_info info{};
    library_path_ = dladdr(create_function, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : library.name();
    library_ = std::make_unique<DynamicLibrary>(library);
    const std::string p = flavor_.prefix;
    const std::string code = flavor_.code_function;
    auto fn = [&](const std::string& name) {
      void* f = library_->symbol(name.c_str());
      if (f == nullptr) throw Error(Errc::environment, flavor_.what + " (" + library_path_ + ") has no function " + name);
      return f;
    };
    api_.version = reinterpret_cast<decltype(api_.version)>(fn(p + "Version"));
    api_.error_string = reinterpret_cast<decltype(api_.error_string)>(fn(p + "GetErrorString"));
    api_.create = reinterpret_cast<decltype(api_.create)>(create_function);
    api_.destroy = reinterpret_cast<decltype(api_.destroy)>(fn(p + "DestroyProgram"));
    api_.add_name_expression = reinterpret_cast<decltype(api_.add_name_expression)>(fn(p + "AddNameExpression"));
    api_.compile = reinterpret_cast<decltype(api_.compile)>(fn(p + "CompileProgram"));
    api_.log_size = reinterpret_cast<decltype(api_.log_size)>(fn(p + "GetProgramLogSize"));
    api_.log = reinterpret_cast<decltype(api_.log)>(fn(p + "GetProgramLog"));
    api_.code_size = reinterpret_cast<decltype(api_.code_size)>(fn(p + "Get" + code + "Size"));
    api_.code = reinterpret_cast<decltype(api_.code)>(fn(p + "Get" + code));
    api_.lowered_name = reinterpret_cast<decltype(api_.lowered_name)>(fn(p + "GetLoweredName"));
    int major = 0, minor = 0;
    check(api_.version(&major, &minor), "read its version");
    identity_ = format("%s %d.%d", flavor_.kind, major, minor);
    for (const std::string& flag : flavor_.fixed_flags) identity_ += " " + flag;
  }

  std::string program_log(RtcApi::Program program) const {
    size_t size = 0;
    if (api_.log_size(program, &size) != 0 || size <= 1) return "";
    std::string log(size, '\0');
    if (api_.log(program, &log[0]) != 0) return "";
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

  void check(int status, const std::string& what) const {
    if (status != 0) {
      throw Error(Errc::compile, format("%s (%s) could not %s: %s", flavor_.kind, library_path_.c_str(),
                                        what.c_str(), api_.error_string(status)));
    }
  }

  RtcFlavor flavor_;
  std::unique_ptr<DynamicLibrary> library_;
  std::string library_path_;
  RtcApi api_{};
  std::string identity_;
};

}  // namespace

std::unique_ptr<Compiler> make_rtc_compiler(RtcFlavor flavor) {
  return std::make_unique<RtcCompiler>(std::move(flavor));
}

std::vector<std::string> toolkit_directories(const std::vector<const char*>& env_vars,
                                             const std::vector<std::string>& fallbacks,
                                             const std::vector<std::string>& subdirs) {
  std::vector<std::string> roots;
  for (const char* var : env_vars) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') roots.emplace_back(value);
  }
  roots.insert(roots.end(), fallbacks.begin(), fallbacks.end());
  std::vector<std::string> directories;
  for (const std::string& root : roots) {
    for (const std::string& sub : subdirs) directories.push_back(sub.empty() ? root : root + "/" + sub);
  }
  return directories;
}

CompileInFlight::CompileInFlight() {
  static std::once_flag hooked;
  std::call_once(hooked, [] { std::atexit(end_by_the_signal_being_handled); });
  ++g_compiles_in_flight;
}

CompileInFlight::~CompileInFlight() { --g_compiles_in_flight; }

}  // namespace iris::compiler
