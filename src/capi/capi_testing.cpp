// The test runner's mechanism (capi_testing.h): test files and the per-case timeout.
#include "capi/capi_testing.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "capi/guard.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/job_end.hpp"
#include "repl/capture.hpp"

namespace iris::capi {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

thread_local std::string t_file_list;

// A case's standard output while it runs (iris_testing_begin_capture), and what it was.
repl::OutputCapture g_case_output(1);
std::string g_case_text;

std::vector<std::string> lua_files_under(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw Error(Errc::environment, format("cannot list %s: %s", dir.c_str(), ec.message().c_str()));
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error(Errc::environment, format("cannot list %s: %s", dir.c_str(), ec.message().c_str()));
    if (it->path().extension() == ".lua" && it->is_regular_file(ec)) {
      files.push_back(it->path().lexically_normal().generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One watchdog thread per process, started on first use. It never ends, so its state is never
// destroyed (a static would be, at exit, under the thread's feet).
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* watchdog = new Watchdog();
    return *watchdog;
  }

  void arm(double seconds, const char* message, double grace_seconds, const char* stuck_message) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto duration = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
    deadline_ = Clock::now() + duration(seconds);
    stuck_deadline_ = deadline_ + duration(grace_seconds);
    message_ = message;
    stuck_message_ = stuck_message;
    armed_ = true;
    fired_ = false;
    if (!started_) {
      std::thread([this] { watch(); }).detach();
      started_ = true;
    }
    wake_.notify_one();
  }

  bool disarm() {
    bool fired = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fired = fired_;
      armed_ = false;
      fired_ = false;
    }
    wake_.notify_one();
    // Whether or not the script has raised it yet, nothing may be raised once the case is over.
    if (fired) interrupt::withdraw_script_interrupt();
    return fired;
  }

 private:
  Watchdog() = default;

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!armed_) {
        wake_.wait(lock);
      } else if (!fired_) {
        if (Clock::now() < deadline_) {
          wake_.wait_until(lock, deadline_);
        } else {
          fired_ = true;
          interrupt::interrupt_script(message_.c_str());
        }
      } else if (Clock::now() < stuck_deadline_) {
        wake_.wait_until(lock, stuck_deadline_);
      } else {
        // The interrupt did not reach the case (a C function, a device wait, compiled code): the other
        // ranks may be waiting for this one, so end the process and with it the job.
        // What the stuck case printed would go with the process: it goes to standard error first.
        if (g_case_output.active()) {
          std::string text, unused;
          g_case_output.stop(&text, &unused);
          if (!text.empty()) std::fprintf(stderr, "its output so far:\n%s", text.c_str());
        }
        std::fprintf(stderr, "%s\n", stuck_message_.c_str());
        std::fflush(stdout);
        std::fflush(stderr);
        const std::string stuck = stuck_message_;
        lock.unlock();
        job_end::failed(stuck, 1);  // the trace, if one is on
        std::_Exit(1);
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool started_ = false;
  bool armed_ = false;
  bool fired_ = false;
  Clock::time_point deadline_;
  Clock::time_point stuck_deadline_;
  std::string message_;
  std::string stuck_message_;
};

}  // namespace
}  // namespace iris::capi

using namespace iris;

extern "C" {

int iris_testing_collect_files(const char* path, const char** list, size_t* bytes) {
  return capi::guarded([&] {
    std::error_code ec;
    std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) throw Error(Errc::usage, format("no such file or directory: %s", path));
    std::vector<std::string> files;
    if (std::filesystem::is_directory(status)) {
      files = capi::lua_files_under(path);
    } else {
      files.push_back(path);
    }
    capi::t_file_list.clear();
    for (const auto& f : files) {
      capi::t_file_list += f;
      capi::t_file_list.push_back('\0');
    }
    *list = capi::t_file_list.data();
    *bytes = capi::t_file_list.size();
  });
}

int iris_testing_arm_timeout(double seconds, const char* message, double grace_seconds, const char* stuck_message) {
  return capi::guarded([&] {
    if (!(seconds > 0) || !(grace_seconds >= 0)) {
      throw Error(Errc::invalid_argument, format("a timeout must be positive, got %g s", seconds));
    }
    capi::Watchdog::instance().arm(seconds, message, grace_seconds, stuck_message);
  });
}

int iris_testing_disarm_timeout(void) { return capi::Watchdog::instance().disarm() ? 1 : 0; }

int iris_testing_begin_capture(void) {
  return capi::guarded([&] { capi::g_case_output.start(); });
}

int iris_testing_end_capture(const char** text, size_t* bytes) {
  return capi::guarded([&] {
    std::string unused;
    capi::g_case_output.stop(&capi::g_case_text, &unused);
    *text = capi::g_case_text.data();
    *bytes = capi::g_case_text.size();
  });
}

}  // extern "C"
