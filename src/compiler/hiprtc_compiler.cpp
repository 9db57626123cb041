// hiprtc: HIP C++ -> AMD code object for the device's gfx architecture. Opened at run time: libhiprtc
// (ROCm 6 and later) or libamdhip64, which holds hiprtc in HIP 5 (Debian 12's HIP 5.2). hiprtc
// pre-includes hip_runtime.h and hip_fp16.h.
#include <regex>

#include "compiler/rtc_compiler.hpp"

namespace iris::compiler {
namespace {

// hiprtc before ROCm 6 finds a name expression by comparing it with its kernels' demangled names, so
// "scale<iris::half>" or "scale<int32_t>" are not found while "scale<__half>" and "scale<int>" are:
// the spelling of the typedefs users write most, as demangled names show them on HIP.
std::string demangled_spelling(const std::string& name) {
  static const std::pair<std::regex, const char*> kTypedefs[] = {
      {std::regex(R"(\biris::half\b)"), "__half"},
      {std::regex(R"(\biris::bfloat16\b)"), "iris::detail::BFloat16"},
      {std::regex(R"((\bstd::)?\bint8_t\b)"), "signed char"},
      {std::regex(R"((\bstd::)?\buint8_t\b)"), "unsigned char"},
      {std::regex(R"((\bstd::)?\bint16_t\b)"), "short"},
      {std::regex(R"((\bstd::)?\buint16_t\b)"), "unsigned short"},
      {std::regex(R"((\bstd::)?\bint32_t\b)"), "int"},
      {std::regex(R"((\bstd::)?\buint32_t\b)"), "unsigned int"},
      {std::regex(R"((\bstd::)?\bint64_t\b)"), "long long"},
      {std::regex(R"((\bstd::)?\buint64_t\b)"), "unsigned long long"},
      {std::regex(R"((\bstd::)?\bsize_t\b)"), "unsigned long"},
  };
  std::string out = name;
  for (const auto& [pattern, spelling] : kTypedefs) out = std::regex_replace(out, pattern, spelling);
  return out;
}

std::vector<std::string> library_candidates() {
  const std::vector<std::string> names = {"libhiprtc.so.6", "libhiprtc.so", "libamdhip64.so.6", "libamdhip64.so.5",
                                          "libamdhip64.so"};
  std::vector<std::string> candidates = names;
  for (const std::string& dir : toolkit_directories({"ROCM_PATH", "HIP_PATH"}, {"/opt/rocm"}, {"lib"})) {
    for (const std::string& name : names) candidates.push_back(dir + "/" + name);
  }
  return candidates;
}

}  // namespace

std::unique_ptr<Compiler> make_hiprtc_compiler() {
  RtcFlavor flavor;
  flavor.kind = "hiprtc";
  flavor.prefix = "hiprtc";
  flavor.code_function = "Code";
  flavor.library_candidates = library_candidates();
  flavor.what = "hiprtc (libhiprtc.so or libamdhip64.so)";
  flavor.missing_hint = "Install HIP (the Debian package libamdhip64-dev, or ROCm) or set ROCM_PATH to it.";
  flavor.fixed_flags = {"-std=c++17", "-O3"};
  flavor.job_flags = [](const std::string&, const CompileJob& job) {
    return std::vector<std::string>{"--offload-arch=" + job.arch, "-I" + job.include_dir};
  };
  flavor.alternative_name = demangled_spelling;
  return make_rtc_compiler(std::move(flavor));
}

}  // namespace iris::compiler
