#include "repl/capture.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "comm/hang_report.hpp"
#include "core/error.hpp"

namespace iris::repl {
namespace {

int new_memory_file() {
  int fd = ::memfd_create("iris-repl-output", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  // Kernels without memfd: an unlinked temporary file does the same.
  std::FILE* file = std::tmpfile();
  if (file == nullptr) throw Error(Errc::environment, format("cannot capture the REPL's output: %s", std::strerror(errno)));
  fd = ::dup(fileno(file));
  std::fclose(file);
  return fd;
}

std::string read_back(int fd) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return {};
  size_t keep = static_cast<size_t>(size) < OutputCapture::kLimitBytes ? static_cast<size_t>(size) : OutputCapture::kLimitBytes;
  std::string text(keep, '\0');
  size_t done = 0;
  while (done < keep) {
    ssize_t n = ::pread(fd, &text[done], keep - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  if (static_cast<size_t>(size) > keep) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += format("(output cut: %s more not shown)\n", human_bytes(static_cast<size_t>(size) - keep).c_str());
  }
  return text;
}

}  // namespace

OutputCapture::~OutputCapture() {
  if (active_) {
    std::string ignored_out, ignored_err;
    stop(&ignored_out, &ignored_err);
  }
}

void OutputCapture::start() {
  if (active_) return;
  std::fflush(stdout);
  std::fflush(stderr);
  for (int k = 0; k < streams_; ++k) {
    files_[k] = new_memory_file();
    saved_[k] = ::dup(k + 1);
    ::dup2(files_[k], k + 1);
  }
  // A hang report while the chunk runs goes to the terminal at once.
  if (streams_ == 2) comm::hang::set_report_fd(saved_[1]);
  active_ = true;
}

void OutputCapture::stop(std::string* out, std::string* err) {
  if (!active_) return;
  std::fflush(stdout);
  std::fflush(stderr);
  std::string* texts[2] = {out, err};
  err->clear();
  if (streams_ == 2) comm::hang::set_report_fd(-1);
  for (int k = 0; k < streams_; ++k) {
    ::dup2(saved_[k], k + 1);
    ::close(saved_[k]);
    *texts[k] = read_back(files_[k]);
    ::close(files_[k]);
    files_[k] = saved_[k] = -1;
  }
  active_ = false;
}

}  // namespace iris::repl
