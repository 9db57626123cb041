// The kernel cache is trusted only as far as it deserves (issue 12): entries are checked against their
// digest, a directory someone else could write is not used (a planted module's constructor never runs),
// a cache that cannot be written means compiling without one, modules load from no predictable path,
// and what killed compiles left in tmp/ goes when the cache opens.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/cache.hpp"
#include "compiler/compiler.hpp"
#include "compiler/files.hpp"
#include "kernel_test_support.hpp"

using iris::compiler::compiler_invocations;
using iris::test::CpuDevice;

namespace {

namespace fs = std::filesystem;

// A new directory of this test, removed when the test program ends.
std::string fresh_directory() {
  static struct Made {
    std::vector<std::string> paths;
    ~Made() {
      for (const std::string& p : paths) fs::remove_all(p);
    }
  } made;
  char path[] = "/tmp/iris-cache-trust-test-XXXXXX";
  REQUIRE(mkdtemp(path) != nullptr);
  made.paths.push_back(path);
  return path;
}

// What this process writes to standard error between construction and text() (log lines).
class StderrCapture {
 public:
  StderrCapture() : path_(fresh_directory() + "/stderr") {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const std::string kSource = "__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }";

// Compiles kSource through a registry on `cache_dir` and runs it: the kernel must work whatever the
// cache held. Returns how many compiles it took.
uint64_t compile_and_run(const std::string& cache_dir, int value) {
  auto options = CpuDevice::default_options();
  options.cache_dir = cache_dir;
  const uint64_t before = compiler_invocations();
  CpuDevice device(1, 0, options);
  auto& k = device.compile(kSource).kernel("fill");
  int* out = device.at<int>(0);
  device.launch(k, {1, 1, 1}, {4, 1, 1}, 0, out, value);
  CHECK(out[3] == value);
  return compiler_invocations() - before;
}

// The one entry of the cache at `dir` (kSource compiled for this machine).
std::string only_entry(const std::string& dir) {
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir + "/kernels")) {
    if (e.path().extension() == ".bin") entries.push_back(e.path().string());
  }
  REQUIRE(entries.size() == 1);
  return entries[0];
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("an entry whose code changed on disk is compiled again, with one warning naming it", "[unit][cache]") {
  const std::string dir = fresh_directory();
  CHECK(compile_and_run(dir, 1) == 1);
  const std::string entry = only_entry(dir);
  std::vector<char> bytes = bytes_of(entry);

  SECTION("random bytes inside the code, the layout intact (it crashed the process)") {
    for (size_t i = 0; i < 512; ++i) bytes[bytes.size() / 2 + i] = static_cast<char>(i * 37 + 11);
  }
  SECTION("a zeroed ELF header (every run failed with 'invalid ELF header', naming no file)") {
    const std::string elf = "\x7f" "ELF";
    const auto at = std::search(bytes.begin(), bytes.end(), elf.begin(), elf.end());
    REQUIRE(at != bytes.end());
    std::fill(at, at + 64, 0);
  }
  write_bytes(entry, bytes);
  StderrCapture capture;
  CHECK(compile_and_run(dir, 2) == 1);  // compiled again, and it runs
  CHECK(compile_and_run(dir, 3) == 0);  // the entry was replaced: a hit now
  const std::string err = capture.text();
  CHECK(count_of(err, "warning: the kernel cache entry " + entry + " is damaged") == 1);
}

TEST_CASE("a cache directory someone else can write is not used: a planted module's constructor never runs",
          "[unit][cache]") {
  const std::string dir = fresh_directory();
  CHECK(compile_and_run(dir, 1) == 1);
  const std::string entry = only_entry(dir);
  const std::string digest = fs::path(entry).stem().string();

  // The planted module: a constructor that leaves a mark, and the symbols the real entry names.
  const std::string work = fresh_directory(), marker = work + "/constructor-ran";
  std::ofstream(work + "/planted.cpp")
      << "#include <cstdio>\n"
      << "__attribute__((constructor)) static void planted() { std::FILE* f = std::fopen(\"" << marker
      << "\", \"w\"); if (f) std::fclose(f); }\n"
      << "extern \"C\" void __iris_cpu_bind(const void*) {}\n"
      << "extern \"C\" void __iris_entry_0(void**, void*) {}\n"
      << "extern \"C\" char __iris_module_state[4096];\nchar __iris_module_state[4096];\n";
  REQUIRE(std::system(("c++ -shared -fPIC -o " + work + "/planted.so " + work + "/planted.cpp").c_str()) == 0);
  iris::compiler::CompiledCode planted;
  const std::vector<char> so = bytes_of(work + "/planted.so");
  planted.code.assign(so.begin(), so.end());
  planted.symbols = {{"fill", "__iris_entry_0"}};
  {
    iris::compiler::KernelCache forge(work + "/forge");
    forge.get_or_compile(digest, [&] { return planted; });
  }
  fs::copy_file(work + "/forge/kernels/" + digest + ".bin", entry, fs::copy_options::overwrite_existing);

  SECTION("the plant works where the directory is trusted (so the refusal below is what stops it)") {
    auto options = CpuDevice::default_options();
    options.cache_dir = dir;
    CpuDevice device(1, 0, options);
    device.compile(kSource);
    CHECK(fs::exists(marker));
  }
  SECTION("owned by another user and writable by all, or ours but writable by all: refused") {
    std::string expected;
    if (geteuid() == 0) {  // root can give it away, as another user's directory would be
      for (const auto& path : {dir, dir + "/kernels", dir + "/include", dir + "/tmp", entry}) {
        REQUIRE(chown(path.c_str(), 65534, 65534) == 0);
      }
      expected = dir + " belongs to user 65534, not to you (user 0)";
    } else {
      expected = dir + " is writable by every user (mode 777)";
    }
    REQUIRE(chmod(dir.c_str(), 0777) == 0);
    StderrCapture capture;
    CHECK(compile_and_run(dir, 4) == 1);  // compiled here, not loaded from there
    CHECK_FALSE(fs::exists(marker));
    const std::string err = capture.text();
    CHECK(count_of(err, "warning: not using the kernel cache: " + expected +
                            ": someone else could put code there that you would run") == 1);
    CHECK(err.find("set IRIS_CACHE_DIR to a directory of your own that only you can write") != std::string::npos);
  }
}

TEST_CASE("a cache that cannot be written: kernels compile without one, with one warning", "[unit][cache]") {
  // A file where the directory should be stops root too, as a read-only file system would.
  const std::string file = fresh_directory() + "/a-file";
  std::ofstream(file) << "not a directory";
  StderrCapture capture;
  auto options = CpuDevice::default_options();
  options.cache_dir = file + "/cache";
  const uint64_t before = compiler_invocations();
  {
    CpuDevice device(1, 0, options);
    device.compile(kSource);
    device.compile("__global__ void other(int* p) { p[0] = 1; }");
  }
  CHECK(compiler_invocations() == before + 2);
  const std::string err = capture.text();
  INFO(err);
  CHECK(count_of(err, "not using the kernel cache: cannot create directory " + file + ": a file is in the way") == 1);
}

TEST_CASE("what compiles of processes no longer running left in tmp/ goes when the cache opens, what they left "
          "among the entries when this process stores one",
          "[unit][cache]") {
  const std::string dir = fresh_directory();
  { iris::compiler::KernelCache cache(dir); }
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = dir + "/tmp/cxx-" + std::to_string(gone) + ".7";
  const std::string live = dir + "/tmp/cxx-" + std::to_string(getpid()) + ".7";
  const std::string stale_entry = dir + "/kernels/.abc.bin.tmp-" + std::to_string(gone) + "-0123456789abcdef";
  const std::string stale_old_entry = dir + "/kernels/abc.bin.tmp." + std::to_string(gone) + ".0";
  // Names that only look alike are not this program's: they stay.
  const std::string lookalike = dir + "/tmp/cxx-" + std::to_string(gone) + "-notes";
  const std::string lookalike_entry = dir + "/kernels/abc.bin.tmp." + std::to_string(gone) + ".0.mine";
  const std::string old_style = dir + "/tmp/cxx-" + std::to_string(gone) + ".3.cpp";
  fs::create_directories(stale);
  std::ofstream(stale + "/kernel.cpp") << "left";
  fs::create_directories(live);
  std::ofstream(stale_entry) << "half";
  std::ofstream(stale_old_entry) << "half";
  std::ofstream(old_style) << "left";
  std::ofstream(lookalike) << "mine";
  std::ofstream(lookalike_entry) << "mine";
  const auto compiled = [] { return iris::compiler::CompiledCode{{1, 2, 3}, {{"k", "k"}}}; };
  {
    iris::compiler::KernelCache cache(dir);
    CHECK_FALSE(fs::exists(stale));
    CHECK_FALSE(fs::exists(old_style));
    CHECK(fs::exists(live));
    // kernels/ holds every entry ever stored: opening the cache does not list it, nor does a hit.
    CHECK(fs::exists(stale_entry));
    cache.get_or_compile("0123", compiled);
    CHECK_FALSE(fs::exists(stale_entry));
    CHECK_FALSE(fs::exists(stale_old_entry));
    CHECK(fs::exists(lookalike));
    CHECK(fs::exists(lookalike_entry));
  }
  std::ofstream(stale_entry) << "half";
  {
    iris::compiler::KernelCache cache(dir);
    cache.get_or_compile("0123", [&]() -> iris::compiler::CompiledCode { FAIL("compiled again"); return {}; });
    CHECK(fs::exists(stale_entry));
  }
}

TEST_CASE("modules load from no predictable path: files planted where they were written do not matter",
          "[unit][cache]") {
  // Modules were written to /dev/shm/iris-lua-kernels-<pid>-<n>.so with O_EXCL: another user creating
  // that name first made every load fail with "File exists".
  std::vector<std::string> planted;
  for (int n = 0; n < 8; ++n) {
    for (const char* dir : {"/dev/shm", "/tmp"}) {
      planted.push_back(std::string(dir) + "/iris-lua-kernels-" + std::to_string(getpid()) + "-" + std::to_string(n) + ".so");
      std::ofstream(planted.back()) << "planted";
    }
  }
  const std::string dir = fresh_directory();
  for (int value = 1; value <= 3; ++value) {
    auto options = CpuDevice::default_options();
    options.cache_dir = dir;
    CpuDevice device(1, 0, options);
    auto& k = device.compile("__global__ void put(int* p) { p[0] = " + std::to_string(value) + "; }").kernel("put");
    int* out = device.at<int>(0);
    device.launch(k, {1, 1, 1}, {1, 1, 1}, 0, out);
    CHECK(out[0] == value);
  }
  for (const std::string& p : planted) std::remove(p.c_str());
}

TEST_CASE("the kernel cache keeps within IRIS_CACHE_MAX, the least recently used entries going first, and "
          "leaves no lock file",
          "[unit][cache]") {
  const std::string dir = fresh_directory();
  setenv("IRIS_CACHE_MAX", "3000", 1);  // three entries of about 980 bytes fit, four do not
  iris::compiler::KernelCache cache(dir);
  unsetenv("IRIS_CACHE_MAX");
  const auto code_of = [](uint8_t fill) {
    return [fill] { return iris::compiler::CompiledCode{std::vector<uint8_t>(900, fill), {{"k", "k"}}}; };
  };
  const auto entry = [&](const std::string& key) { return dir + "/kernels/" + key + ".bin"; };
  const auto age = [&](const std::string& key, int seconds) {
    struct timespec times[2];
    clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    REQUIRE(utimensat(AT_FDCWD, entry(key).c_str(), times, 0) == 0);
  };
  const std::vector<std::string> keys = {"aa", "bb", "cc"};
  for (size_t i = 0; i < keys.size(); ++i) {
    cache.get_or_compile(keys[i], code_of(static_cast<uint8_t>(i)));
    age(keys[i], 1000 - 100 * static_cast<int>(i));  // stored long ago, "aa" first
  }
  // Read again, "aa" becomes the most recently used of the three.
  cache.get_or_compile("aa", []() -> iris::compiler::CompiledCode {
    FAIL("compiled again");
    return {};
  });
  CHECK(fs::exists(entry("bb")));
  CHECK(fs::exists(entry("cc")));
  // A fourth takes kernels/ beyond the bound: the least recently used go until 90% of it is left.
  cache.get_or_compile("dd", code_of(3));
  CHECK(fs::exists(entry("aa")));
  CHECK(fs::exists(entry("dd")));
  CHECK_FALSE(fs::exists(entry("bb")));
  CHECK_FALSE(fs::exists(entry("cc")));
  for (const auto& item : fs::directory_iterator(dir + "/kernels")) {
    INFO(item.path().string());
    CHECK(item.path().extension() == ".bin");
  }
}
