#include "programs/program.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "programs/registry.hpp"

namespace iris::programs {
namespace {

// Where a kernel is, for its label: "pattern.lua:14", the line of its name. A snippet's source starts
// with `#line L "script"` (its first line is line L of the script, the origin's line); a file's
// origin is its path, given the line; iris's own kernels (kernels/...) keep their file's name.
std::string kernel_origin(const ProgramSource& source, int line) {
  const std::string& origin = source.origin;
  if (line <= 0 || origin.rfind("kernels/", 0) == 0) return origin;
  const size_t colon = origin.rfind(':');
  const bool has_line = colon != std::string::npos && colon + 1 < origin.size() &&
                        origin.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  if (!has_line) return origin + ":" + std::to_string(line);
  int first = 0;
  if (std::sscanf(source.source.c_str(), "#line %d ", &first) != 1 || first <= 0) return origin;
  return origin.substr(0, colon + 1) + std::to_string(first + line - 2);  // source line 2 is script line `first`
}

}  // namespace

Program::Program(Registry& registry, ProgramSource source)
    : registry_(registry),
      source_(std::move(source)),
      parsed_(parse_source(source_.source)) {
  // Defines given with the compile options are macros too: a parameter of type T with defines
  // {T = "float"} is a float.
  for (const auto& [name, value] : source_.defines) parsed_.aliases.emplace(name, value);
  std::vector<std::string> names;
  for (const KernelSignature& s : parsed_.kernels) {
    if (!s.is_template) names.push_back(s.name);
  }
  build(names);  // even with nothing to export: a compile error shows now, at iris.compile
}

std::string Program::describe_kernels() const {
  if (parsed_.kernels.empty()) return "(none: no __global__ function found)";
  std::string out;
  for (const KernelSignature& s : parsed_.kernels) {
    if (!out.empty()) out += ", ";
    out += s.name;
    if (s.is_template) {
      out += "<";
      for (size_t i = 0; i < s.template_params.size(); ++i) out += (i > 0 ? ", " : "") + s.template_params[i].name;
      out += ">";
    }
  }
  return out;
}

std::string Program::signatures_text() const {
  std::string out;
  for (const KernelSignature& s : parsed_.kernels) {
    out += s.name;
    if (s.is_template) {
      out += "<";
      for (size_t i = 0; i < s.template_params.size(); ++i) out += (i > 0 ? ", " : "") + s.template_params[i].name;
      out += ">";
    }
    out += "(";
    for (size_t i = 0; i < s.params.size(); ++i) out += (i > 0 ? ", " : "") + s.params[i].type + " " + s.params[i].name;
    out += ")\n";
  }
  return out;
}

const KernelSignature& Program::find_signature(const InstanceName& name) const {
  const KernelSignature* by_last_component = nullptr;
  int matches = 0;
  for (const KernelSignature& s : parsed_.kernels) {
    if (s.name == name.base) return s;
    const size_t colon = s.name.rfind("::");
    if (colon != std::string::npos && s.name.substr(colon + 2) == name.base) {
      by_last_component = &s;
      ++matches;
    }
  }
  if (matches == 1) return *by_last_component;
  throw Error(Errc::invalid_argument, format("%s has no kernel named '%s'; its kernels: %s", source_.origin.c_str(),
                                             name.base.c_str(), describe_kernels().c_str()));
}

Kernel& Program::kernel(const std::string& text) {
  InstanceName name = parse_instance_name(text);
  const KernelSignature& signature = find_signature(name);
  name.base = signature.name;
  const std::string canonical = name.canonical();
  if (auto it = kernels_.find(canonical); it != kernels_.end()) return *it->second;

  if (signature.is_template && !name.has_args) {
    throw Error(Errc::invalid_argument,
                format("kernel %s (%s) is a template: name an instance, e.g. %s<%s>", signature.name.c_str(),
                       source_.origin.c_str(), signature.name.c_str(),
                       signature.template_params.empty() || signature.template_params[0].is_type ? "float" : "1"));
  }
  if (!signature.is_template && name.has_args) {
    throw Error(Errc::invalid_argument, format("kernel %s (%s) is not a template: name it without <...>",
                                               signature.name.c_str(), source_.origin.c_str()));
  }
  auto wrong_argument_count = [&] {
    return Error(Errc::invalid_argument,
                 format("kernel %s (%s) takes %zu template arguments, %s gives %zu", signature.name.c_str(),
                        source_.origin.c_str(), signature.template_params.size(), canonical.c_str(), name.args.size()));
  };
  if (name.args.size() > signature.template_params.size()) throw wrong_argument_count();
  std::map<std::string, std::string> substitutions;
  for (size_t i = 0; i < signature.template_params.size(); ++i) {
    const TemplateParam& p = signature.template_params[i];
    if (i < name.args.size()) {
      substitutions[p.name] = name.args[i];
    } else if (!p.default_value.empty()) {
      substitutions[p.name] = p.default_value;
    } else {
      throw wrong_argument_count();  // too few, and this one has no default
    }
  }

  auto kernel = std::make_unique<Kernel>();
  kernel->name = canonical;
  kernel->label = canonical + " (" + kernel_origin(source_, signature.line) + ")";
  kernel->registry = &registry_;
  kernel->program = this;
  kernel->early_start = signature.early_start;
  for (size_t i = 0; i < signature.params.size(); ++i) {
    const Param& p = signature.params[i];
    ParamType type = classify_param(p.type, substitutions, parsed_.aliases);
    if (type.kind == ParamKind::unsupported) {
      throw Error(Errc::invalid_argument, format("kernel %s: parameter %zu '%s': %s", kernel->label.c_str(), i + 1,
                                                 p.name.c_str(), type.why_unsupported.c_str()));
    }
    kernel->params.push_back({p.name, type});
  }

  const Binary* binary = nullptr;
  for (auto it = binaries_.rbegin(); it != binaries_.rend() && binary == nullptr; ++it) {
    if (it->symbols.count(canonical) != 0) binary = &*it;
  }
  if (binary == nullptr) {  // a template instance not compiled yet
    std::vector<std::string> names = names_;
    names.push_back(canonical);
    build(names);
    binary = &binaries_.back();
  }
  kernel->module = binary->module.get();
  kernel->function = binary->module->function(binary->symbols.at(canonical));
  Kernel& result = *kernel;
  kernels_[canonical] = std::move(kernel);
  return result;
}

void Program::build(const std::vector<std::string>& names) {
  Binary binary;
  binary.module = registry_.build(source_, names, &binary.symbols);
  binaries_.push_back(std::move(binary));
  names_ = names;  // only once it compiled: a bad instance name does not spoil later builds
}

}  // namespace iris::programs
