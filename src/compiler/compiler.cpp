#include "compiler/compiler.hpp"

#include <atomic>

#include "core/error.hpp"

namespace iris::compiler {

std::unique_ptr<Compiler> make_nvrtc_compiler();
std::unique_ptr<Compiler> make_hiprtc_compiler();
std::unique_ptr<Compiler> make_cxx_compiler();

std::unique_ptr<Compiler> make_compiler(const std::string& kind) {
  if (kind == "nvrtc") return make_nvrtc_compiler();
  if (kind == "hiprtc") return make_hiprtc_compiler();
  if (kind == "cxx") return make_cxx_compiler();
  throw Error(Errc::environment, "unknown kernel compiler '" + kind + "': use nvrtc, hiprtc or cxx");
}

namespace {
std::atomic<uint64_t> g_invocations{0};
}

uint64_t compiler_invocations() { return g_invocations.load(); }
void count_compiler_invocation() { g_invocations.fetch_add(1); }

}  // namespace iris::compiler
