#include "compiler/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "compiler/files.hpp"
#include "compiler/hash.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"

namespace iris::compiler {
namespace {

// Version 2 entries carry the digest of everything after it; version 1 entries had none (they are
// compiled again, silently: they are not damaged, just old).
constexpr char kMagic[8] = {'I', 'R', 'I', 'S', 'K', 'C', '0', '2'};
constexpr size_t kDigestChars = 32;
// A compile never takes this long; a holder that does is stuck (its process would have released the
// lock by dying), and waiting longer would only turn an error into a hang.
constexpr double kLockWaitSeconds = 900;

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

std::vector<uint8_t> serialize(const CompiledCode& code) {
  std::vector<uint8_t> body;
  put_u64(body, code.symbols.size());
  for (const auto& [name, symbol] : code.symbols) {
    put_string(body, name);
    put_string(body, symbol);
  }
  put_u64(body, code.code.size());
  body.insert(body.end(), code.code.begin(), code.code.end());
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  const std::string digest = digest_of_bytes(body.data(), body.size());
  out.insert(out.end(), digest.begin(), digest.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

enum class Entry { absent, old, damaged, good };

// A whole, well-formed entry whose content matches its digest is `good`; anything else is compiled
// again.
Entry deserialize(const std::vector<uint8_t>& in, CompiledCode* code) {
  if (in.size() < sizeof(kMagic) || std::memcmp(in.data(), kMagic, 6) != 0) return Entry::damaged;
  if (std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) return Entry::old;
  size_t at = sizeof(kMagic) + kDigestChars;
  if (in.size() < at) return Entry::damaged;
  const std::string stored(in.begin() + sizeof(kMagic), in.begin() + at);
  if (digest_of_bytes(in.data() + at, in.size() - at) != stored) return Entry::damaged;
  auto u64 = [&](uint64_t* v) {
    if (in.size() - at < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= static_cast<uint64_t>(in[at + i]) << (8 * i);
    at += 8;
    return true;
  };
  auto string = [&](std::string* s) {
    uint64_t n = 0;
    if (!u64(&n) || in.size() - at < n) return false;
    s->assign(in.begin() + at, in.begin() + at + n);
    at += n;
    return true;
  };
  uint64_t count = 0;
  if (!u64(&count) || count > in.size()) return Entry::damaged;
  code->symbols.resize(count);
  for (auto& [name, symbol] : code->symbols) {
    if (!string(&name) || !string(&symbol)) return Entry::damaged;
  }
  uint64_t size = 0;
  if (!u64(&size) || in.size() - at != size) return Entry::damaged;
  code->code.assign(in.begin() + at, in.end());
  return Entry::good;
}

// Reads the entry at `path`; a damaged one is reported once per process and file.
bool load_entry(const std::string& path, CompiledCode* code) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, &bytes)) return false;
  const Entry entry = deserialize(bytes, code);
  if (entry == Entry::damaged) {
    static std::mutex mutex;
    static std::set<std::string> reported;
    std::lock_guard<std::mutex> lock(mutex);
    if (reported.insert(path).second) {
      log::write(log::Level::warning, "the kernel cache entry " + path +
                                          " is damaged (its content does not match the digest it was written "
                                          "with); compiling it again");
    }
  }
  return entry == Entry::good;
}

// An exclusive flock on `path`, polled so Ctrl-C and a stuck holder end the wait with an error.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(Errc::environment, format("cannot open the lock file %s: %s", path.c_str(), std::strerror(errno)));
    const auto start = std::chrono::steady_clock::now();
    bool announced = false;
    while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        const int error = errno;
        close(fd_);
        throw Error(Errc::environment, format("cannot lock %s: %s", path.c_str(), std::strerror(error)));
      }
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!announced && waited > 5) {
        log::write(log::Level::info, "waiting for another process compiling the same kernel (" + path + ")");
        announced = true;
      }
      if (waited > kLockWaitSeconds) {
        close(fd_);
        throw Error(Errc::environment,
                    format("waited %.0f s for another process compiling the same kernel (lock %s); if no iris-lua "
                           "is running, delete the lock file",
                           waited, path.c_str()));
      }
      try {
        interrupt::check("waiting for a kernel compile on another rank");
      } catch (...) {
        close(fd_);
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~FileLock() {
    flock(fd_, LOCK_UN);
    close(fd_);
  }

 private:
  int fd_ = -1;
};

}  // namespace

KernelCache::KernelCache(std::string dir) : dir_(std::move(dir)) {
  make_directories(dir_);
  for (const std::string& path : {dir_, dir_ + "/kernels", dir_ + "/include", dir_ + "/tmp"}) {
    make_directories(path);
    const std::string problem = untrusted_because(path);
    if (!problem.empty()) throw Error(Errc::environment, problem + ": someone else could put code there that you would run");
    if (access(path.c_str(), W_OK) != 0) throw Error(Errc::environment, format("cannot write to %s: %s", path.c_str(), std::strerror(errno)));
  }
  remove_stale_temporaries(dir_ + "/tmp", "cxx-");
}

std::unique_ptr<KernelCache> KernelCache::without_storage() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  // Those of processes no longer running (killed while they compiled) go first.
  remove_stale_temporaries(parent, "iris-lua-");
  std::string pattern = format("%s/iris-lua-%d-XXXXXX", parent.c_str(), static_cast<int>(getpid()));
  if (mkdtemp(pattern.data()) == nullptr) {
    throw Error(Errc::environment, format("cannot create a temporary directory in %s for compiling kernels: %s",
                                          parent.c_str(), std::strerror(errno)));
  }
  std::unique_ptr<KernelCache> cache(new KernelCache());
  cache->dir_ = pattern;
  cache->stores_ = false;
  make_directories(cache->dir_ + "/tmp");
  return cache;
}

KernelCache::~KernelCache() {
  if (!stores_) remove_tree(dir_);
}

std::string KernelCache::entry_path(const std::string& digest) const { return dir_ + "/kernels/" + digest + ".bin"; }

CompiledCode KernelCache::get_or_compile(const std::string& digest, const std::function<CompiledCode()>& compile) {
  if (!stores_) return compile();
  const std::string path = entry_path(digest);
  CompiledCode code;
  if (load_entry(path, &code)) return code;  // the common case: no lock needed, entries appear whole
  FileLock lock(path + ".lock");
  if (load_entry(path, &code)) return code;  // another process compiled it while this one waited
  code = compile();
  // kernels/ holds every entry ever stored, so it is listed only by a process that stores one, once.
  std::call_once(entries_swept_, [&] { remove_stale_temporaries(dir_ + "/kernels", ".tmp."); });
  const std::vector<uint8_t> bytes = serialize(code);
  write_file_atomically(path, bytes.data(), bytes.size());
  return code;
}

std::string default_cache_dir() {
  if (auto dir = env::get(env::Var::cache_dir)) return *dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/iris-lua";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/iris-lua";
  throw Error(Errc::environment, "no directory for the kernel cache: set IRIS_CACHE_DIR (HOME is not set)");
}

}  // namespace iris::compiler
