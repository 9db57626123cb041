// A compiled snippet (iris.compile / iris.compile_file) and the kernels taken from it.
//
// The source is compiled when the program is created, exporting every kernel that is not a template.
// A template instance ("scale<float>") is compiled when first asked for: the program is compiled again
// with every name asked for so far, and the new code is loaded beside the old (kernels already handed
// out keep theirs). The disk cache makes a repeat of the same sequence in a later run cost nothing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "programs/signature.hpp"
#include "runtime/backend.hpp"

namespace iris::programs {

class Registry;

struct ProgramSource {
  std::string source;     // the user's code
  std::string origin;     // where it came from, for labels and messages: "pattern.lua:12", "ops.hip"
  std::string description;  // for compile errors: "the snippet at pattern.lua:12", "ops.hip"
  std::string file_name;  // what compiler messages call it (#line): "snippet", "ops.hip"
  std::vector<std::pair<std::string, std::string>> defines;  // NAME, value
  std::vector<std::string> options;                          // extra compiler flags
};

struct KernelParam {
  std::string name;
  ParamType type;
};

struct Kernel {
  std::string name;   // canonical: "put_ones", "scale<float, 4>"
  std::string label;  // "put_ones (pattern.lua:12)": names it in fault messages
  std::vector<KernelParam> params;
  runtime::Module* module = nullptr;
  void* function = nullptr;
  Registry* registry = nullptr;
  const class Program* program = nullptr;  // the program it came from
  bool early_start = false;  // declared IRIS_EARLY_START (Registry::launch_config)
};

class Program {
 public:
  Program(Registry& registry, ProgramSource source);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const ProgramSource& source() const { return source_; }
  const std::vector<KernelSignature>& signatures() const { return parsed_.kernels; }
  // The kernel named `name` ("put_ones", "scale<float>"), compiling an instance when needed. Throws
  // Error(invalid_argument) for a name the source does not define, Error(compile) when an instance
  // does not compile.
  Kernel& kernel(const std::string& name);

  // "put_ones(float* buf, int n), scale<T>(T* x, int n)": for messages.
  std::string describe_kernels() const;
  // Every kernel with its parameters, a line each: "put_ones(float* buf, int n, iris::Context ctx)",
  // "scale<T>(T* x, T factor)": what help(mod) shows.
  std::string signatures_text() const;

 private:
  struct Binary {
    std::unique_ptr<runtime::Module> module;
    std::map<std::string, std::string> symbols;  // canonical name -> symbol
  };
  const KernelSignature& find_signature(const InstanceName& name) const;
  void build(const std::vector<std::string>& names);

  Registry& registry_;
  ProgramSource source_;
  ParsedSource parsed_;  // the kernels and aliases of source_
  std::vector<std::string> names_;  // exported by the latest binary
  std::vector<Binary> binaries_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;  // by canonical name
};

}  // namespace iris::programs
