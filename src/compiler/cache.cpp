#include "compiler/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "compiler/files.hpp"
#include "compiler/hash.hpp"
#include "core/activity.hpp"
#include "core/bytes.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"

namespace iris::compiler {
namespace {

// Version 3 entries carry the digest of their key and of everything after it; versions 1 and 2 (no
// digest, a digest of the content alone) are compiled again, silently: they are not damaged, just old.
constexpr char kMagic[8] = {'I', 'R', 'I', 'S', 'K', 'C', '0', '3'};
constexpr size_t kDigestChars = 32;
// No compiled module comes near this; a larger file in kernels/ is not an entry.
constexpr size_t kMaxEntryBytes = size_t(1) << 30;
// The default of IRIS_CACHE_MAX (core/env.def).
constexpr uint64_t kDefaultCacheMax = uint64_t(2) << 30;
// An entry used again has its modification time set to now, the order of eviction; not more often than
// this, so that a run loading its kernels from the cache writes nothing.
constexpr double kTouchAfterSeconds = 60;

const std::regex& entry_name() {
  static const std::regex pattern("^[0-9a-f]+\\.bin$");
  return pattern;
}
const std::regex& lock_name() {
  static const std::regex pattern("^[0-9a-f]+\\.bin\\.lock$");
  return pattern;
}

using bytes::put_string;
using bytes::put_u64;

std::vector<uint8_t> serialize(const std::string& key, const CompiledCode& code) {
  std::vector<uint8_t> body;
  put_u64(body, code.symbols.size());
  for (const auto& [name, symbol] : code.symbols) {
    put_string(body, name);
    put_string(body, symbol);
  }
  put_u64(body, code.code.size());
  body.insert(body.end(), code.code.begin(), code.code.end());
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  const std::string digest = digest_of_entry(key, body.data(), body.size());
  out.insert(out.end(), digest.begin(), digest.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

enum class Entry { absent, old, damaged, good };

// A whole, well-formed entry whose content matches its digest under `key` is `good`; anything else is
// compiled again.
Entry deserialize(const std::string& key, const std::vector<uint8_t>& in, CompiledCode* code) {
  if (in.size() < sizeof(kMagic) || std::memcmp(in.data(), kMagic, 6) != 0) return Entry::damaged;
  if (std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) return Entry::old;
  size_t at = sizeof(kMagic) + kDigestChars;
  if (in.size() < at) return Entry::damaged;
  const std::string stored(in.begin() + sizeof(kMagic), in.begin() + at);
  if (digest_of_entry(key, in.data() + at, in.size() - at) != stored) return Entry::damaged;
  bytes::Reader read{in, at};
  uint64_t count = 0;
  if (!read.u64(&count) || count > in.size()) return Entry::damaged;
  code->symbols.resize(count);
  for (auto& [name, symbol] : code->symbols) {
    if (!read.string(&name) || !read.string(&symbol)) return Entry::damaged;
  }
  uint64_t size = 0;
  if (!read.u64(&size) || read.left() != size) return Entry::damaged;
  code->code.assign(in.begin() + read.at, in.end());
  return Entry::good;
}

// Says once per process and file why an entry is not used.
void warn_once(const std::string& path, const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(path).second) log::write(log::Level::warning, "the kernel cache entry " + path + " " + why);
}

// Reads the entry stored under `key` at `path`. Only a regular file of this user that nobody else can
// write is read (a fifo would block, a link to /dev/zero would never end, another user's file would
// run their code); it must carry the digest of `key` and its content (a file copied from another entry
// does not). Anything else is reported once and compiled again (then replaced).
bool load_entry(const std::string& path, const std::string& key, CompiledCode* code) {
  std::vector<uint8_t> bytes;
  std::string problem;
  struct stat info {};
  files::ReadOptions options;
  options.max_bytes = kMaxEntryBytes;
  options.follow_symlinks = false;
  const files::Read read = files::read_regular_file(path, options, &bytes, &problem, &info);
  if (read == files::Read::missing) return false;
  if (read == files::Read::refused) {
    warn_once(path, "is not used: it " + problem + "; compiling it again");
    return false;
  }
  const std::string untrusted = untrusted_because(info, path);
  if (!untrusted.empty()) {
    warn_once(path, "is not used: " + untrusted + ", so someone else could have put code there that you would "
                    "run; compiling it again");
    return false;
  }
  const Entry entry = deserialize(key, bytes, code);
  if (entry == Entry::damaged) {
    warn_once(path, "is damaged (its content does not match the digest it was written with); compiling it again");
  }
  if (entry != Entry::good) return false;
  // Used again: the least recently used entries are evicted first (KernelCache::evict).
  const double age = std::difftime(std::time(nullptr), info.st_mtime);
  if (age > kTouchAfterSeconds) utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return true;
}

// The id of the process holding a lock, as it wrote it into the lock file ("" when unknown).
std::string holder_of(int fd) {
  char text[32] = {0};
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? std::string(text, static_cast<size_t>(n)) : std::string();
}

// An exclusive flock on the lock file `path`, polled so that Ctrl-C ends the wait, and watched as any
// wait for another rank is while the holder makes no progress (activity::ProcessWait: the hang report,
// IRIS_HANG_TIMEOUT; a holder whose compiler works is waited for as long as it takes). The holder
// writes its process id into the file and removes it before letting go, so no lock file stays; a
// process that locked a file just removed (its inode no longer at `path`) opens the new one instead.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : path_(path) {
    std::unique_ptr<activity::ProcessWait> wait;
    std::string holder;
    const auto start = std::chrono::steady_clock::now();
    bool announced = false;
    for (;;) {
      fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
      struct stat info {};
      if (fd_ < 0 || fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
        const int error = fd_ < 0 ? errno : EINVAL;
        if (fd_ >= 0) close(fd_);
        throw Error(Errc::environment, format("cannot use the lock file %s: %s", path.c_str(),
                                              error == EINVAL ? "it is not a regular file" : std::strerror(error)));
      }
      while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
          const int error = errno;
          close(fd_);
          throw Error(Errc::environment, format("cannot lock %s: %s", path.c_str(), std::strerror(error)));
        }
        try {
          // The holder writes its id right after it locks: until then the wait knows no process.
          if (!wait || holder.empty()) {
            const std::string now_holding = holder_of(fd_);
            if (!wait || now_holding != holder) {
              holder = now_holding;
              wait = std::make_unique<activity::ProcessWait>(
                  "waiting for " + (holder.empty() ? std::string("another process") : "process " + holder) +
                      " compiling the same kernel (lock " + path + ")",
                  holder.empty() ? -1 : std::atoi(holder.c_str()), true);
            }
          }
          const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          if (!announced && waited > 5) {
            log::write(log::Level::info, "waiting for another process compiling the same kernel (" + path + ")");
            announced = true;
          }
          wait->poll();
          interrupt::check("waiting for a kernel compile on another rank");
        } catch (...) {
          close(fd_);
          throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      struct stat now {};
      if (stat(path.c_str(), &now) == 0 && now.st_dev == info.st_dev && now.st_ino == info.st_ino) break;
      close(fd_);  // the holder removed this file while this process waited for it: lock the new one
    }
    const std::string pid = std::to_string(getpid());
    if (ftruncate(fd_, 0) == 0 && pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
      // only for the messages of processes waiting for this one
    }
  }
  ~FileLock() {
    unlink(path_.c_str());
    flock(fd_, LOCK_UN);
    close(fd_);
  }

 private:
  std::string path_;
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
  max_bytes_ = env::bytes(env::Var::cache_max, kDefaultCacheMax);
  remove_stale_temporaries(dir_ + "/tmp", Temporaries::compiles);
}

std::unique_ptr<KernelCache> KernelCache::without_storage() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  // Those of processes no longer running (killed while they compiled) go first: only directories that
  // prove they were made by iris-lua (make_private_directory), never one a user named alike.
  remove_stale_temporaries(parent, Temporaries::private_dirs);
  std::unique_ptr<KernelCache> cache(new KernelCache());
  cache->dir_ = make_private_directory(parent);
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
  if (load_entry(path, digest, &code)) return code;  // the common case: no lock needed, entries appear whole
  {
    FileLock lock(path + ".lock");
    if (load_entry(path, digest, &code)) return code;  // another process compiled it while this one waited
    code = compile();
    const std::vector<uint8_t> bytes = serialize(digest, code);
    write_file_atomically(path, bytes.data(), bytes.size());
  }
  // kernels/ holds every entry, so it is listed only by a process that stores one.
  std::call_once(entries_swept_, [&] { remove_stale_temporaries(dir_ + "/kernels", Temporaries::entries); });
  evict(path);
  return code;
}

void KernelCache::evict(const std::string& keep) {
  struct Found {
    std::string path;
    uint64_t bytes;
    struct timespec used;
  };
  std::vector<Found> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir_ + "/kernels", ec)) {
    const std::string name = item.path().filename().string();
    struct stat info {};
    if (lstat(item.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid()) continue;
    if (std::regex_match(name, lock_name())) {
      // A lock file whose holder died (the holder removes its own): nobody holds it, so it goes.
      const int fd = open(item.path().c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
          unlink(item.path().c_str());
          flock(fd, LOCK_UN);
        }
        close(fd);
      }
      continue;
    }
    if (!std::regex_match(name, entry_name())) continue;
    entries.push_back({item.path().string(), static_cast<uint64_t>(info.st_size), info.st_mtim});
    total += static_cast<uint64_t>(info.st_size);
  }
  if (max_bytes_ == 0 || total <= max_bytes_) return;
  // Least recently used first, down to 90% of the bound, so that the next stores do not evict again.
  std::sort(entries.begin(), entries.end(), [](const Found& a, const Found& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  const uint64_t target = max_bytes_ / 10 * 9;
  size_t evicted = 0;
  for (const Found& e : entries) {
    if (total <= target) break;
    if (e.path == keep) continue;
    if (unlink(e.path.c_str()) == 0) {
      total -= e.bytes;
      ++evicted;
    }
  }
  log::write(log::Level::debug, format("kernel cache: evicted %zu least recently used entries (IRIS_CACHE_MAX=%s)",
                                       evicted, human_bytes(max_bytes_).c_str()));
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
