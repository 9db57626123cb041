// NVRTC: CUDA C++ -> cubin for the device's architecture. Opened at run time (libnvrtc.so.13, else .12).
// NVRTC builds in neither cuda_fp16.h nor cuda_bf16.h; they come from the CUDA include directory,
// found at run time too.
#include <sys/stat.h>

#include "compiler/rtc_compiler.hpp"
#include "core/error.hpp"

namespace iris::compiler {
namespace {

const std::vector<const char*> kCudaRootVariables = {"CUDA_HOME", "CUDA_PATH"};
const char* kCudaHint =
    "Install the CUDA toolkit (NVRTC and its headers) or set CUDA_HOME to it; the GPU machines have it "
    "under /usr/local/cuda.";

bool file_exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::vector<std::string> library_candidates() {
  std::vector<std::string> candidates = {"libnvrtc.so.13", "libnvrtc.so.12"};
  for (const std::string& dir : toolkit_directories(kCudaRootVariables, {"/usr/local/cuda"},
                                                    {"lib64", "lib", "targets/x86_64-linux/lib",
                                                     "targets/sbsa-linux/lib"})) {
    candidates.push_back(dir + "/libnvrtc.so.13");
    candidates.push_back(dir + "/libnvrtc.so.12");
  }
  return candidates;
}

// The directory holding cuda_fp16.h and cuda_bf16.h: CUDA_HOME, CUDA_PATH, /usr/local/cuda, or next to
// the NVRTC library that was loaded.
std::string cuda_include_dir(const std::string& lib) {
  std::vector<std::string> candidates =
      toolkit_directories(kCudaRootVariables, {"/usr/local/cuda"}, {"include", "targets/x86_64-linux/include"});
  const size_t slash = lib.find_last_of('/');
  if (slash != std::string::npos) {
    const std::string lib_dir = lib.substr(0, slash);
    candidates.push_back(lib_dir + "/../include");     // <root>/lib64/libnvrtc.so -> <root>/include
    candidates.push_back(lib_dir + "/../../include");  // <root>/targets/<arch>/lib -> <root>/include
  }
  std::string tried;
  for (const std::string& dir : candidates) {
    if (file_exists(dir + "/cuda_fp16.h") && file_exists(dir + "/cuda_bf16.h")) return dir;
    tried += "\n  " + dir;
  }
  throw Error(Errc::environment, "NVRTC (" + lib + ") needs the CUDA headers cuda_fp16.h and cuda_bf16.h, found in none of:" +
                                     tried + "\n" + kCudaHint);
}

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler() {
  RtcFlavor flavor;
  flavor.kind = "nvrtc";
  flavor.prefix = "nvrtc";
  flavor.code_function = "CUBIN";
  flavor.library_candidates = library_candidates();
  flavor.what = "NVRTC (libnvrtc.so.13 or libnvrtc.so.12)";
  flavor.missing_hint = kCudaHint;
  flavor.fixed_flags = {"-std=c++17", "-lineinfo"};
  flavor.job_flags = [include = std::string()](const std::string& library, const CompileJob& job) mutable {
    if (include.empty()) include = cuda_include_dir(library);
    return std::vector<std::string>{"--gpu-architecture=" + job.arch, "-I" + job.include_dir, "-I" + include};
  };
  return make_rtc_compiler(std::move(flavor));
}

}  // namespace iris::compiler
