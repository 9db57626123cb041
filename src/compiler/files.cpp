#include "compiler/files.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"

namespace iris::compiler {
namespace {

[[noreturn]] void fail(const char* what, const std::string& path, int error) {
  throw Error(Errc::environment, format("%s %s: %s", what, path.c_str(), std::strerror(error)));
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

void make_directories(const std::string& path) {
  if (path.empty()) return;
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) throw Error(Errc::environment, "cannot create directory " + path + ": a file is in the way");
    return;
  }
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create directory", path, errno);
}

std::string untrusted_because(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) fail("cannot examine", path, errno);
  return untrusted_because(info, path);
}

std::string untrusted_because(const struct stat& info, const std::string& path) {
  if (info.st_uid != geteuid()) {
    return format("%s belongs to user %d, not to you (user %d)", path.c_str(), static_cast<int>(info.st_uid),
                  static_cast<int>(geteuid()));
  }
  if (info.st_mode & S_IWOTH) return format("%s is writable by every user (mode %03o)", path.c_str(), info.st_mode & 0777);
  if ((info.st_mode & S_IWGRP) && info.st_gid != getegid()) {
    return format("%s is writable by group %d, which is not yours (mode %03o)", path.c_str(),
                  static_cast<int>(info.st_gid), info.st_mode & 0777);
  }
  return "";
}

namespace {

// The proof inside a private directory: this file, holding this text with the creator's pid.
const char* const kProofName = ".iris-lua-private-directory";
std::string proof_text(long pid) { return format("made by iris-lua process %ld for its compiles\n", pid); }

bool process_gone(long pid) { return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// The whole-name patterns of Temporaries; group 1 is the process id. (Earlier versions wrote the
// compiles' files as cxx-<pid>.<n>.cpp and entries' as <digest>.bin.tmp.<pid>.<n>.)
const std::regex& pattern_of(Temporaries kind) {
  static const std::regex compiles("^cxx-([0-9]+)\\.[0-9]+(\\.(cpp|so|log))?$");
  static const std::regex entries("^(?:\\.[0-9a-f]+\\.bin\\.tmp-([0-9]+)-[0-9a-f]{16}|[0-9a-f]+\\.bin\\.tmp\\.([0-9]+)\\.[0-9]+)$");
  static const std::regex private_dirs("^iris-lua-([0-9]+)-[A-Za-z0-9]{6}$");
  switch (kind) {
    case Temporaries::compiles: return compiles;
    case Temporaries::entries: return entries;
    default: return private_dirs;
  }
}

// Whether the directory `path` (lstat `info`) proves it is the private directory of process `pid`.
bool proves_private_directory(const std::string& path, const struct stat& info, long pid) {
  if (!S_ISDIR(info.st_mode) || (info.st_mode & 0777) != 0700) return false;
  std::vector<uint8_t> proof;
  std::string problem;
  struct stat proof_info {};
  files::ReadOptions options;
  options.max_bytes = 256;
  options.follow_symlinks = false;
  if (files::read_regular_file(path + "/" + kProofName, options, &proof, &problem, &proof_info) != files::Read::ok) {
    return false;
  }
  return proof_info.st_uid == geteuid() && std::string(proof.begin(), proof.end()) == proof_text(pid);
}

}  // namespace

void remove_stale_temporaries(const std::string& dir, Temporaries kind) {
  std::error_code ec;
  const std::regex& pattern = pattern_of(kind);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch match;
    if (!std::regex_match(name, match, pattern)) continue;
    const long pid = std::strtol((match[1].matched ? match[1] : match[2]).str().c_str(), nullptr, 10);
    struct stat info;
    if (pid <= 0 || pid == getpid() || lstat(entry.path().c_str(), &info) != 0 || info.st_uid != geteuid()) continue;
    const bool directory = S_ISDIR(info.st_mode), file = S_ISREG(info.st_mode);
    if (kind == Temporaries::entries ? !file : kind == Temporaries::private_dirs ? !directory : !(file || directory)) continue;
    if (kind == Temporaries::private_dirs && !proves_private_directory(entry.path().string(), info, pid)) continue;
    if (process_gone(pid)) remove_tree(entry.path().string());
  }
}

std::string make_private_directory(const std::string& parent) {
  std::string path = format("%s/iris-lua-%d-XXXXXX", parent.c_str(), static_cast<int>(getpid()));
  if (mkdtemp(path.data()) == nullptr) fail("cannot create a temporary directory in", parent, errno);
  const std::string proof = proof_text(getpid());
  const std::string problem = files::replace_file(path + "/" + kProofName, proof.data(), proof.size(), 0600, false);
  if (!problem.empty()) {
    remove_tree(path);
    throw Error(Errc::environment, format("cannot write %s/%s: it %s", path.c_str(), kProofName, problem.c_str()));
  }
  return path;
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return format("%ld.%u", static_cast<long>(getpid()), counter.fetch_add(1));
}

void write_file_atomically(const std::string& path, const void* data, size_t bytes) {
  make_directories(parent_of(path));
  const std::string problem = files::replace_file(path, data, bytes, 0644, false);
  if (!problem.empty()) throw Error(Errc::environment, format("cannot write %s: it %s", path.c_str(), problem.c_str()));
}

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  files::ReadOptions options;
  options.max_bytes = size_t(1) << 30;
  std::string problem;
  switch (files::read_regular_file(path, options, out, &problem)) {
    case files::Read::ok: return true;
    case files::Read::missing: return false;
    default: throw Error(Errc::environment, format("cannot read %s: it %s", path.c_str(), problem.c_str()));
  }
}

std::string read_text_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, &bytes)) throw Error(Errc::invalid_argument, "cannot open " + path + ": no such file");
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace iris::compiler
