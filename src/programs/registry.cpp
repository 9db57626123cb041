#include "programs/registry.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "compiler/cache.hpp"
#include "compiler/device_sources.hpp"
#include "compiler/hash.hpp"
#include "core/activity.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/trace.hpp"
#include "heap/layout.hpp"
#include "iris/impl/abi.h"
#include "programs/device_timeline.hpp"

namespace iris::programs {
namespace {

std::string host_arch() {
  struct utsname name;
  uname(&name);
  return name.machine;
}

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// The translation unit every compiler sees: the header, then the user's code with its own line numbers.
std::string translation_unit(const ProgramSource& source) {
  std::string name;
  for (char c : source.file_name) {
    if (c == '"' || c == '\\') name += '\\';
    name += c;
  }
  return "#include <iris/iris.hpp>\n#line 1 \"" + name + "\"\n" + source.source + "\n";
}

// "iris-lua: compiling ctx.ccl's all_reduce for sm_90a, once" for one of iris's own kernel files
// (`what` is "iris's kernels/ccl/all_reduce.hip"), "" for anything else.
std::string library_notice(const std::string& what, const std::string& arch) {
  const std::string prefix = "iris's kernels/";
  if (what.rfind(prefix, 0) != 0) return "";
  std::string name = what.substr(prefix.size());
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".hip") == 0) name.resize(name.size() - 4);
  std::string said = "iris's " + name;
  if (name.rfind("ccl/", 0) == 0) said = "ctx.ccl's " + name.substr(4);
  if (name.rfind("ops/", 0) == 0) said = "ctx.ops's " + name.substr(4);
  if (name.rfind("tensor/", 0) == 0) said = "the tensors' " + name.substr(7) + " operations";
  if (name == "device_barrier") said = "ctx:device_barrier";
  return format("iris-lua: compiling %s for %s, once", said.c_str(), arch.c_str());
}

}  // namespace

std::vector<CrossTarget> parse_cross_targets(const std::string& text) {
  std::vector<CrossTarget> targets;
  std::stringstream in(text);
  for (std::string entry; std::getline(in, entry, ',');) {
    entry = trim(entry);
    if (entry.empty()) continue;
    const bool optional = entry.back() == '?';
    const std::string name = optional ? entry.substr(0, entry.size() - 1) : entry;
    const size_t colon = name.find(':');
    const std::string platform = name.substr(0, colon);
    const std::string arch = colon == std::string::npos ? "" : trim(name.substr(colon + 1));
    if (platform == "cuda" && (arch.rfind("sm_", 0) == 0 || arch.rfind("compute_", 0) == 0)) {
      targets.push_back({{"nvrtc", arch}, optional});
    } else if (platform == "hip" && arch.rfind("gfx", 0) == 0) {
      targets.push_back({{"hiprtc", arch}, optional});
    } else if (platform == "cpu") {
      targets.push_back({{"cxx", arch.empty() ? host_arch() : arch}, optional});
    } else {
      throw Error(Errc::environment, "IRIS_CROSS_COMPILE: '" + entry +
                                         "' is not a target; write cuda:sm_XX, hip:gfxNNN or cpu, separated by commas, "
                                         "with a ? after those to leave out where their compiler is missing "
                                         "(e.g. cuda:sm_90,hip:gfx90a?)");
    }
  }
  return targets;
}

RegistryOptions RegistryOptions::from_environment() {
  RegistryOptions o;
  o.cache_dir = compiler::default_cache_dir();
  if (auto text = env::get(env::Var::cross_compile)) o.cross_targets = parse_cross_targets(*text);
  o.wait_timeout_ns = static_cast<int64_t>(
      std::llround(env::seconds(env::Var::wait_timeout, static_cast<double>(o.wait_timeout_ns) / 1e9, false) * 1e9));
  o.launch_blocking = env::flag(env::Var::launch_blocking, o.launch_blocking);
  o.early_start = env::flag(env::Var::early_start, o.early_start);
  return o;
}

Registry::Registry(DeviceContext device, RegistryOptions options) : device_(device), options_(std::move(options)) {
  if (device_.mailbox.host == nullptr || device_.mailbox.bytes < sizeof(abi::DeviceMailbox)) {
    throw Error(Errc::internal, "the kernel registry needs the job's mailbox (Session::mailbox)");
  }
  if (options_.launch_blocking) {
    log::write(log::Level::info, "IRIS_LAUNCH_BLOCKING=1: every launch waits for its kernel");
  }
}

Registry::~Registry() {
  if (capturing()) abort_capture();
  graphs_.clear();    // graphs launch the programs' kernels
  programs_.clear();  // modules go before the backend that loaded them
}

compiler::KernelCache& Registry::cache() {
  if (!cache_) {
    try {
      cache_ = std::make_unique<compiler::KernelCache>(options_.cache_dir);
    } catch (const Error& e) {
      if (e.code() != Errc::environment) throw;
      // Compiling still works without a cache, only slower: say so once (rank 0 speaks for the node).
      if (device_.rank == 0) {
        log::write(log::Level::warning,
                   format("not using the kernel cache: %s. Kernels compile without it (every run compiles them "
                          "again); set IRIS_CACHE_DIR to a directory of your own that only you can write",
                          e.what()));
      }
      cache_ = compiler::KernelCache::without_storage();
    }
    include_dir_ = compiler::materialize_device_headers(cache_->dir());
  }
  return *cache_;
}

compiler::Compiler& Registry::compiler(const std::string& kind) {
  auto& slot = compilers_[kind];
  if (!slot) slot = compiler::make_compiler(kind);
  return *slot;
}

bool Registry::compiler_available(const std::string& kind) {
  auto [known, inserted] = compiler_available_.emplace(kind, true);
  if (inserted) {
    try {
      compiler(kind).identity();
    } catch (const Error& e) {
      if (e.code() != Errc::environment) throw;
      known->second = false;
      log::write(log::Level::info, "IRIS_CROSS_COMPILE: leaving out the optional " + kind + " target: " + e.what());
    }
  }
  return known->second;
}

Program& Registry::compile(ProgramSource source) {
  trace::Span span("compile", "compile");
  if (span) span.args().add("source", source.origin);
  if (trace::active() && !compiled_traced(source)) source.defines.emplace_back(kTraceDefine, "1");
  compiler::Hasher key;
  key.add(source.source).add(source.origin).add(source.file_name).add(source.description);
  for (const auto& [name, value] : source.defines) key.add(name).add(value);
  for (const std::string& option : source.options) key.add(option);
  auto& slot = programs_[key.hex()];
  if (!slot) {
    try {
      slot = std::make_unique<Program>(*this, std::move(source));
    } catch (...) {
      programs_.erase(key.hex());
      throw;
    }
  }
  return *slot;
}

compiler::CompiledCode Registry::compile_for(const runtime::CodeTarget& target, const std::string& unit,
                                             const std::vector<std::string>& options,
                                             const std::vector<std::string>& names, const std::string& what,
                                             bool cross) {
  const std::string where = format("%s for %s (%s%s)", what.c_str(), target.arch.c_str(), target.compiler.c_str(),
                                   cross ? ", IRIS_CROSS_COMPILE" : "");
  const std::string notice = cross ? "" : library_notice(what, target.arch);
  try {
    compiler::Compiler& c = compiler(target.compiler);
    compiler::KernelCache& kernel_cache = cache();
    compiler::Hasher key;
    key.add("iris-lua kernel 1").add(c.identity()).add(target.arch).add(unit);
    for (const std::string& o : options) key.add(o);
    key.add("names");
    for (const std::string& n : names) key.add(n);
    key.add(compiler::device_header_digest());
    compiler::CompileJob job{unit, options, names, include_dir_, kernel_cache.dir() + "/tmp", target.arch};
    const activity::Scope compiling("compiling " + where);  // what a hang report says of this rank
    return kernel_cache.get_or_compile(key.hex(), [&] {
      // The first use of a library kernel pauses for seconds: a person at a terminal is told why, once.
      if (!notice.empty() && device_.rank == 0 && log::stderr_reaches_terminal()) {
        std::fprintf(stderr, "%s; cached in %s (iris-lua warm compiles every library kernel ahead)\n", notice.c_str(),
                     kernel_cache.dir().c_str());
        std::fflush(stderr);
      }
      trace::Span span("compiler", "compile");  // only on a cache miss
      if (span) span.args().add("compiler", target.compiler).add("arch", target.arch).add("cross", cross ? 1 : 0);
      return c.compile(job);
    });
  } catch (const Error& e) {
    if (e.code() == Errc::compile) throw Error(Errc::compile, "cannot compile " + where + ":\n" + e.what());
    if (cross) throw Error(e.code(), "cannot compile " + where + ": " + e.what());
    throw;
  }
}

std::unique_ptr<runtime::Module> Registry::build(const ProgramSource& source, const std::vector<std::string>& names,
                                                 std::map<std::string, std::string>* symbols) {
  const std::string unit = translation_unit(source);
  std::vector<std::string> defines;
  for (const auto& [name, value] : source.defines) defines.push_back("-D" + name + "=" + value);
  std::vector<std::string> options = defines;
  options.insert(options.end(), source.options.begin(), source.options.end());

  const runtime::CodeTarget own = backend().code_target();
  compiler::CompiledCode code = compile_for(own, unit, options, names, source.description, false);
  for (const CrossTarget& cross : options_.cross_targets) {
    const runtime::CodeTarget& target = cross.target;
    if (target.compiler == own.compiler && target.arch == own.arch) continue;
    if (cross.optional && !compiler_available(target.compiler)) continue;
    // User flags are meant for the own compiler (-ffast-math means nothing to NVRTC): defines only.
    compile_for(target, unit, defines, names, source.description, true);
  }

  std::unique_ptr<runtime::Module> module = backend().load_module(code.code);
  abi::ModuleState state{};
  state.heap_bases = device_.heap_bases;
  state.rank = device_.rank;
  state.world_size = device_.world_size;
  state.mailbox = static_cast<abi::DeviceMailbox*>(device_.mailbox.device);
  state.wait_timeout_ns = options_.wait_timeout_ns;
  state.trace = trace_buffer_;
  state.proxy = device_.proxy;
  module->write_global("__iris_module_state", &state, sizeof(state));
  for (const auto& [name, symbol] : code.symbols) (*symbols)[name] = symbol;
  return module;
}

runtime::LaunchConfig Registry::launch_config(const Kernel& kernel, const runtime::LaunchConfig& given) {
  runtime::LaunchConfig config = given;
  config.early_start = kernel.early_start && options_.early_start && backend().early_start();
  return config;
}

void Registry::launch(const Kernel& kernel, const runtime::LaunchConfig& given, void** args) {
  const runtime::LaunchConfig config = launch_config(kernel, given);
  if (capturing()) return captured_launch(kernel, config, args);
  if (trace::active()) return traced_launch(kernel, config, args);
  backend().launch(*kernel.module, kernel.function, config, args, kernel.label);
  // The one place IRIS_LAUNCH_BLOCKING acts (backends never wait after a launch themselves).
  if (options_.launch_blocking) synchronize();
}

void Registry::synchronize() { backend().synchronize(); }

Program& Registry::builtin(const std::string& name) {
  const std::string path = "kernels/" + name + ".hip";
  const std::string* text = compiler::find_embedded_kernel(path);
  if (text == nullptr) {
    throw Error(Errc::invalid_argument, "'" + name + "' is not one of iris's built-in kernel files (" + path +
                                            " is not embedded in this binary)");
  }
  return compile(ProgramSource{*text, path, "iris's " + path, path, {}, {}});
}

void Registry::device_barrier() {
  if (device_.heap_bases == nullptr || device_.heap_base == nullptr) {
    throw Error(Errc::invalid_argument, "ctx:device_barrier() needs the symmetric heap: call iris.init() first");
  }
  if (barrier_kernel_ == nullptr) {
    barrier_kernel_ = &builtin("device_barrier").kernel("iris_device_barrier");
  }
  abi::ContextData context{device_.heap_bases, device_.rank, device_.world_size};
  uint64_t* slots = reinterpret_cast<uint64_t*>(static_cast<char*>(device_.heap_base) + heap::kRuntimeScratchOffset);
  void* args[] = {&context, &slots};
  runtime::LaunchConfig config;
  config.block.x = static_cast<unsigned>(std::min(device_.world_size, 1024));
  launch(*barrier_kernel_, config, args);
}

// --- graphs ----------------------------------------------------------------------------------------------

void Registry::begin_capture() {
  if (capturing()) throw Error(Errc::invalid_argument, "a capture is already in progress on this rank");
  backend().begin_capture();
}

void Registry::captured_launch(const Kernel& kernel, const runtime::LaunchConfig& config, void** args) {
  // While a trace is on, the traced twin is what the graph runs, so replays record their device events.
  const Kernel& recorded = trace::active() ? traced_variant(kernel) : kernel;
  trace::Span span(kernel.name, "capture");  // recorded, not run: no device span follows
  if (span) span.args().add("kernel", recorded.label);
  std::vector<size_t> arg_bytes;
  arg_bytes.reserve(recorded.params.size());
  for (const KernelParam& p : recorded.params) arg_bytes.push_back(p.type.bytes);
  backend().capture_launch(*recorded.module, recorded.function, config, args, arg_bytes, recorded.label);
}

runtime::Graph& Registry::end_capture(const std::string& label) {
  std::unique_ptr<runtime::Graph> graph = backend().end_capture(label);
  runtime::Graph& made = *graph;
  graphs_.emplace(&made, HeldGraph{std::move(graph), label});
  return made;
}

void Registry::abort_capture() { backend().abort_capture(); }

const std::string& Registry::graph_label(const runtime::Graph& graph) const {
  auto held = graphs_.find(&graph);
  if (held == graphs_.end()) throw Error(Errc::internal, "a graph this rank's registry does not hold");
  return held->second.label;
}

void Registry::replay(runtime::Graph& graph, int64_t times) {
  const std::string& label = graph_label(graph);
  if (trace::active()) {
    traced_replay(graph, label, times);
  } else {
    graph.launch(times);
  }
  if (options_.launch_blocking) synchronize();
}

void Registry::free_graph(runtime::Graph& graph) {
  graph_label(graph);  // it is held here
  graphs_.erase(&graph);
}

}  // namespace iris::programs
