// Run-time compilers: source text in, loadable code out. Three kinds, one interface:
//   nvrtc   NVIDIA's NVRTC -> cubin for the device's sm_XX           (nvrtc_compiler.cpp)
//   hiprtc  AMD's hiprtc   -> code object for the device's gfxNNN    (hiprtc_compiler.cpp)
//   cxx     the host C++ compiler (IRIS_CXX) -> a shared object the cpu backend runs (cxx_compiler.cpp)
// NVRTC and hiprtc are opened at run time (dlopen), so iris-lua starts on machines without them; the
// first compile for such a target says what was missing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace iris::compiler {

struct CompileJob {
  std::string source;                // the whole translation unit (header include, #line, user source)
  std::vector<std::string> options;  // user options and -D defines, passed as they are
  std::vector<std::string> names;    // kernels to export: "put_ones", "scale<float, 2>"
  std::string include_dir;           // holds iris/iris.hpp (materialize_device_headers)
  std::string work_dir;              // for temporaries (the host compiler works on files)
  std::string arch;                  // "sm_90a", "gfx90a", "x86_64"
};

struct CompiledCode {
  std::vector<uint8_t> code;
  // For each name of the job, the symbol to look up in the loaded module (NVRTC's lowered name, ...).
  std::vector<std::pair<std::string, std::string>> symbols;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual const char* kind() const = 0;  // "nvrtc", "hiprtc", "cxx"
  // The compiler and its version, part of every cache key: "nvrtc 13.0", "hiprtc 5.2", "cxx /usr/bin/g++-12 ...".
  virtual const std::string& identity() = 0;
  // Throws Error(compile, <compiler log>) when the source does not compile, Error(environment) when the
  // compiler cannot run at all.
  virtual CompiledCode compile(const CompileJob& job) = 0;
};

// kind: "nvrtc", "hiprtc" or "cxx". Throws Error(environment) for an unknown kind; a compiler that is
// not installed fails at its first use, naming what it looked for.
std::unique_ptr<Compiler> make_compiler(const std::string& kind);

// How many compilations ran in this process (any compiler): tests check that a cache hit ran none.
uint64_t compiler_invocations();
void count_compiler_invocation();

}  // namespace iris::compiler
