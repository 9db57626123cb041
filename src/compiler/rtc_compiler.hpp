// NVRTC and hiprtc have the same API shape (hiprtc copies NVRTC's): one implementation, two flavors.
// The library is opened at run time (core/dynamic_library.hpp, as the GPU backends open their
// drivers), so iris-lua starts where it is not installed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compiler.hpp"

namespace iris::compiler {

struct RtcFlavor {
  const char* kind;            // "nvrtc"
  const char* prefix;          // function prefix: "nvrtc", "hiprtc"
  const char* code_function;   // "CUBIN" (nvrtcGetCUBIN/nvrtcGetCUBINSize) or "Code"
  std::vector<std::string> library_candidates;
  std::string what;            // "NVRTC (libnvrtc.so.13 or .12)"
  std::string missing_hint;    // what to install or set
  // Flags every compile gets (language, optimization); part of the compiler's identity, so changing
  // them invalidates cached code.
  std::vector<std::string> fixed_flags;
  // The flags that depend on the job and the machine: architecture, include directories.
  // `library_path`: the file the library was loaded from.
  std::function<std::vector<std::string>(const std::string& library_path, const CompileJob& job)> job_flags;
  // Another spelling of a name expression to try when the compiler does not resolve the first (hiprtc
  // before ROCm 6 matches names textually against its demangled symbols); empty: none.
  std::function<std::string(const std::string& name)> alternative_name;
};

std::unique_ptr<Compiler> make_rtc_compiler(RtcFlavor flavor);

// Held while a run-time compiler compiles. NVRTC's front end handles SIGTERM (and the other ending
// signals) itself while it compiles, and its handler calls exit(): the process then ran its exit-time
// destructors (the session, the GPU heap) inside a signal handler, in the middle of a compile, and a job
// sent SIGTERM ended with an abort (134) instead of 143 (tests/fault_injection, on an H200). While one is
// held, an exit-time hook looks for the signal being handled (the handler's thread has it blocked) and
// ends the process by that signal instead, as it would have ended without the compiler's handler.
class CompileInFlight {
 public:
  CompileInFlight();
  ~CompileInFlight();
  CompileInFlight(const CompileInFlight&) = delete;
  CompileInFlight& operator=(const CompileInFlight&) = delete;
};

// Directories a toolkit may be in: <root>/<subdir> for the value of each variable that is set, then for
// each fallback root.
std::vector<std::string> toolkit_directories(const std::vector<const char*>& env_vars,
                                             const std::vector<std::string>& fallbacks,
                                             const std::vector<std::string>& subdirs);

}  // namespace iris::compiler
