// The compile pipeline: the three compilers against the device header, #line mapping, the disk cache
// (a hit runs no compiler; one compile serves every waiting process), template instances on demand,
// and IRIS_CROSS_COMPILE.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "compiler/cache.hpp"
#include "compiler/compiler.hpp"
#include "compiler/device_sources.hpp"
#include "compiler/rtc_compiler.hpp"
#include "compiler/files.hpp"
#include "compiler/hash.hpp"
#include "kernel_test_support.hpp"

using iris::Errc;
using iris::compiler::compiler_invocations;
using iris::test::CpuDevice;
using iris::test::error_of;

namespace {

std::string fresh_directory() {
  char path[] = "/tmp/iris-compiler-test-XXXXXX";
  REQUIRE(mkdtemp(path) != nullptr);
  return path;
}

std::string header_coverage_source() {
  return iris::compiler::read_text_file(iris::test::test_kernel_dir() + "/header_coverage.hip");
}

// Compiles `unit` with the named compiler for `arch` (through the tests' kernel cache: NVRTC takes
// a while over the whole header); returns "" or the error, and `skipped` when the compiler is not
// installed here. CI names the compilers it must have in IRIS_TEST_REQUIRE_COMPILERS (.ci/run), so
// there a missing one fails instead of skipping.
std::string compile_with(const std::string& kind, const std::string& arch, const std::string& unit,
                         const std::vector<std::string>& names, bool* skipped) {
  auto compiler = iris::compiler::make_compiler(kind);
  *skipped = false;
  try {
    compiler->identity();
  } catch (const iris::Error& e) {
    if (e.code() != Errc::environment) throw;
    const char* required = std::getenv("IRIS_TEST_REQUIRE_COMPILERS");
    if (required != nullptr &&
        (std::string(",") + required + ",").find("," + kind + ",") != std::string::npos) {
      FAIL(kind << " is required here (IRIS_TEST_REQUIRE_COMPILERS=" << required << ") but cannot be used: " << e.what());
    }
    *skipped = true;
    WARN("skipped: " << kind << " is not installed here: " << e.what());
    return "";
  }
  iris::compiler::CompileJob job;
  job.source = unit;
  job.names = names;
  job.include_dir = iris::compiler::materialize_device_headers(iris::test::test_cache_dir());
  job.work_dir = iris::test::test_cache_dir() + "/tmp";
  job.arch = arch;
  iris::compiler::Hasher key;
  key.add("compiler_test").add(compiler->identity()).add(arch).add(unit).add(iris::compiler::device_header_digest());
  for (const std::string& n : names) key.add(n);
  return error_of([&] {
    iris::compiler::KernelCache cache(iris::test::test_cache_dir());
    const auto code = cache.get_or_compile(key.hex(), [&] { return compiler->compile(job); });
    CHECK_FALSE(code.code.empty());
    CHECK(code.symbols.size() == names.size());
  });
}

std::string unit_of(const std::string& source) { return "#include <iris/iris.hpp>\n#line 1 \"snippet\"\n" + source; }

}  // namespace

TEST_CASE("NVRTC, hiprtc and the host compiler all compile every call of the device header", "[unit][compiler]") {
  const std::string unit = unit_of(header_coverage_source());
  const std::vector<std::string> names = {"header_coverage", "model_coverage", "warp_coverage", "scale<float, 2>",
                                          "scale<iris::half, 3>"};
  for (const auto& [kind, arch] : std::vector<std::pair<std::string, std::string>>{
           {"cxx", "x86_64"}, {"nvrtc", "sm_90"}, {"hiprtc", "gfx90a"}}) {
    INFO(kind << " for " << arch);
    bool skipped = false;
    CHECK(compile_with(kind, arch, unit, names, &skipped) == "");
  }
}

TEST_CASE("compile errors point into the snippet on every compiler", "[unit][compiler]") {
  const std::string unit = unit_of("__global__ void broken(int* p) {\n  int x = 1;\n  p[0] = undeclared_name;\n}\n");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"cxx", "snippet:3:"}, {"nvrtc", "snippet(3)"}, {"hiprtc", "snippet:3:"}};
  for (const auto& [kind, where] : expected) {
    INFO(kind);
    bool skipped = false;
    const std::string error = compile_with(kind, kind == "nvrtc" ? "sm_90" : kind == "hiprtc" ? "gfx90a" : "x86_64",
                                           unit, {"broken"}, &skipped);
    if (skipped) continue;
    CHECK_THAT(error, Catch::Contains(where));
    CHECK_THAT(error, Catch::Contains("undeclared_name"));
  }
}

TEST_CASE("a compile error names the snippet, the target and the compiler log", "[unit][compiler]") {
  CpuDevice device;
  Errc code{};
  const std::string message = error_of([&] { device.compile("__global__ void k() {\n  nope();\n}", "script.lua:7"); }, &code);
  CHECK(code == Errc::compile);
  CHECK_THAT(message, Catch::StartsWith("cannot compile the snippet at script.lua:7 for "));
  CHECK_THAT(message, Catch::Contains("(cxx):\n"));
  CHECK_THAT(message, Catch::Contains("snippet:2:3: error"));
  CHECK_THAT(message, Catch::Contains("nope"));
}

TEST_CASE("a cache hit runs no compiler, also in a new process's registry", "[unit][compiler][cache]") {
  auto options = CpuDevice::default_options();
  options.cache_dir = fresh_directory();
  const std::string source = "__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }";
  const uint64_t before = compiler_invocations();
  {
    CpuDevice device(1, 0, options);
    device.compile(source);
    CHECK(compiler_invocations() == before + 1);
    device.compile(source);  // the same program: found in memory
    CHECK(compiler_invocations() == before + 1);
  }
  {
    CpuDevice device(1, 0, options);  // nothing in memory: the disk cache
    auto& k = device.compile(source).kernel("fill");
    CHECK(compiler_invocations() == before + 1);
    int* out = device.at<int>(0);
    device.launch(k, {1, 1, 1}, {4, 1, 1}, 0, out, 9);
    CHECK(out[3] == 9);
    // Defines are part of the key.
    device.registry->compile({source, "x.lua:1", "the snippet at x.lua:1", "snippet", {{"N", "2"}}, {}});
    CHECK(compiler_invocations() == before + 2);
  }
}

TEST_CASE("processes compiling the same kernel at once: one compiles, the others wait and load", "[unit][cache]") {
  iris::compiler::KernelCache cache(fresh_directory());
  std::atomic<int> compiles{0};
  auto compile = [&] {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    iris::compiler::CompiledCode code;
    code.code = {1, 2, 3};
    code.symbols = {{"k", "k_symbol"}};
    return code;
  };
  std::vector<iris::compiler::CompiledCode> results(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) ranks.emplace_back([&, r] { results[r] = cache.get_or_compile("feedc0de", compile); });
  for (auto& t : ranks) t.join();
  CHECK(compiles == 1);
  for (const auto& r : results) {
    CHECK(r.code == std::vector<uint8_t>{1, 2, 3});
    CHECK(r.symbols.at(0).second == "k_symbol");
  }
}

TEST_CASE("a damaged cache entry is compiled again, not loaded", "[unit][cache]") {
  iris::compiler::KernelCache cache(fresh_directory());
  const std::string garbage = "IRISKC01 but cut short";
  iris::compiler::write_file_atomically(cache.dir() + "/kernels/0123.bin", garbage.data(), garbage.size());
  int compiles = 0;
  const auto code = cache.get_or_compile("0123", [&] {
    ++compiles;
    iris::compiler::CompiledCode c;
    c.code = {7};
    return c;
  });
  CHECK(compiles == 1);
  CHECK(code.code == std::vector<uint8_t>{7});
}

TEST_CASE("template instances compile on first request; earlier kernels keep working", "[unit][compiler]") {
  CpuDevice device;
  auto& program = device.compile(R"(
    template <typename T, int Scale = 2>
    __global__ void scale(T* x, int n) {
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = static_cast<T>(static_cast<float>(x[i]) * Scale);
    }
    __global__ void set(float* x, float v) { x[threadIdx.x] = v; }
  )");
  auto& set = program.kernel("set");
  auto& scale_float = program.kernel("scale< float >");
  CHECK(scale_float.name == "scale<float>");
  CHECK(&program.kernel("scale<float>") == &scale_float);
  auto& scale_int3 = program.kernel("scale<int, 3>");
  CHECK(scale_int3.params.at(0).type.dtype == "int32");

  float* x = device.at<float>(0);
  device.launch(set, {1, 1, 1}, {8, 1, 1}, 0, x, 1.5f);
  device.launch(scale_float, {1, 1, 1}, {8, 1, 1}, 0, x, 8);
  CHECK(x[7] == 3.0f);
  int* y = device.at<int>(0, 128 * 1024);
  y[0] = 5;
  device.launch(scale_int3, {1, 1, 1}, {1, 1, 1}, 0, y, 1);
  CHECK(y[0] == 15);

  // A bad instance is a compile error that does not spoil the program.
  CHECK_THAT(error_of([&] { program.kernel("scale<floot>"); }), Catch::Contains("floot"));
  device.launch(program.kernel("scale<double>"), {1, 1, 1}, {1, 1, 1}, 0, device.at<double>(0, 256 * 1024), 1);
  CHECK_THAT(error_of([&] { program.kernel("scale"); }), Catch::Contains("is a template: name an instance"));
  CHECK_THAT(error_of([&] { program.kernel("set<int>"); }), Catch::Contains("is not a template"));
  CHECK_THAT(error_of([&] { program.kernel("missing"); }),
             Catch::Contains("has no kernel named 'missing'; its kernels: scale<T, Scale>, set"));
}

TEST_CASE("IRIS_CROSS_COMPILE compiles every kernel for the listed targets and reports their errors",
          "[unit][compiler]") {
  const auto targets = iris::programs::parse_cross_targets(" cuda:sm_90 ,hip:gfx90a?,cpu");
  REQUIRE(targets.size() == 3);
  CHECK(targets[0].target.compiler == "nvrtc");
  CHECK_FALSE(targets[0].optional);
  CHECK(targets[1].target.arch == "gfx90a");
  CHECK(targets[1].optional);
  CHECK_THAT(error_of([] { iris::programs::parse_cross_targets("cuda:gfx90a"); }),
             Catch::Contains("'cuda:gfx90a' is not a target"));

  auto options = CpuDevice::default_options();
  options.cross_targets = iris::programs::parse_cross_targets("hip:gfx90a");
  bool skipped = false;
  compile_with("hiprtc", "gfx90a", unit_of("__global__ void k() {}"), {"k"}, &skipped);
  if (skipped) return;
  CpuDevice device(1, 0, options);
  device.compile("__global__ void fine(int* p) { p[0] = 1; }");
  Errc code{};
  const std::string message = error_of(
      [&] {
        device.compile("#if defined(IRIS_PLATFORM_HIP)\nthis does not compile on AMD;\n#endif\n__global__ void k() {}",
                       "cross.lua:4");
      },
      &code);
  CHECK(code == Errc::compile);
  CHECK_THAT(message, Catch::Contains("cannot compile the snippet at cross.lua:4 for gfx90a (hiprtc, IRIS_CROSS_COMPILE)"));
  CHECK_THAT(message, Catch::Contains("snippet:2:"));
}

TEST_CASE("a run-time compiler that is not installed is an error naming what was looked for", "[unit][compiler]") {
  iris::compiler::RtcFlavor flavor;
  flavor.kind = "nvrtc";
  flavor.prefix = "nvrtc";
  flavor.code_function = "CUBIN";
  flavor.library_candidates = {"libiris-no-such-compiler.so.1", "/nowhere/libnvrtc.so.13"};
  flavor.what = "NVRTC-like";
  flavor.missing_hint = "install it or set CUDA_HOME";
  auto compiler = iris::compiler::make_rtc_compiler(flavor);
  Errc code{};
  const std::string message = error_of([&] { compiler->identity(); }, &code);
  CHECK(code == Errc::environment);
  CHECK_THAT(message, Catch::StartsWith("cannot load NVRTC-like: tried libiris-no-such-compiler.so.1 ("));
  CHECK_THAT(message, Catch::Contains("/nowhere/libnvrtc.so.13 ("));
  CHECK_THAT(message, Catch::EndsWith("; install it or set CUDA_HOME"));
}

TEST_CASE("a run-time compiler that failed to load half-way fails the same way when asked again", "[unit][compiler]") {
  // NVRTC itself, asked for a function it does not have: the library opens, one lookup fails. The
  // next use must load again and fail again, never go on with the functions left unset.
  iris::compiler::RtcFlavor flavor;
  flavor.kind = "nvrtc";
  flavor.prefix = "nvrtc";
  flavor.code_function = "NoSuchThing";
  flavor.library_candidates = {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so.13",
                               "/usr/local/cuda/lib64/libnvrtc.so.12"};
  flavor.what = "NVRTC";
  flavor.missing_hint = "install the CUDA toolkit";
  auto compiler = iris::compiler::make_rtc_compiler(flavor);
  const std::string first = error_of([&] { compiler->identity(); });
  if (first.rfind("cannot load NVRTC", 0) == 0) {
    WARN("NVRTC is not installed here: only the not-installed case ran: " << first);
  } else {
    CHECK_THAT(first, Catch::Contains("has no function nvrtcGetNoSuchThingSize"));
  }
  CHECK(error_of([&] { compiler->identity(); }) == first);
}

// Regression (tests/fault_injection on an H200): NVRTC's SIGTERM handler calls exit() mid-compile, and the
// job ended by abort (134) from its exit-time destructors. A child process plays NVRTC: its handler calls
// exit(3) while a compile is in flight, and the process must end by SIGTERM all the same.
TEST_CASE("a compiler's signal handler that calls exit mid-compile ends the process by the signal",
          "[unit][compiler]") {
  auto run_child = [](bool compiling) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      struct sigaction exit_on_term {};
      exit_on_term.sa_handler = [](int) { exit(3); };
      sigaction(SIGTERM, &exit_on_term, nullptr);
      if (compiling) {
        const iris::compiler::CompileInFlight in_flight;
        raise(SIGTERM);
      } else {
        raise(SIGTERM);
      }
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    return status;
  };
  const int outside = run_child(false);
  CHECK(WIFEXITED(outside));
  CHECK(WEXITSTATUS(outside) == 3);  // outside a compile, a handler's exit stands
  const int inside = run_child(true);
  REQUIRE(WIFSIGNALED(inside));
  CHECK(WTERMSIG(inside) == SIGTERM);
}
