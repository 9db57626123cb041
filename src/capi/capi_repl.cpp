// The REPL's C API (capi_repl.h): one session per process, opened and closed by every rank together.
#include "capi/capi_repl.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "repl/capture.hpp"
#include "repl/interrupts.hpp"
#include "repl/line_reader.hpp"
#include "repl/terminal.hpp"
#include "session/session.hpp"

namespace iris::capi {
namespace {

enum Input { kPipe = 0, kPrompts = 1, kEditing = 2 };

struct ReplSession {
  std::unique_ptr<repl::TerminalRelay> relay;        // rank 0 under mpirun from a terminal
  std::unique_ptr<repl::LineReader> reader;          // rank 0
  repl::OutputCapture capture;
  int console = -1;  // the real stderr, for the Ctrl-C handler's messages
  // Buffers behind the returned pointers.
  std::string line, captured_out, captured_err, input_name;

  ~ReplSession() {
    repl::uninstall_interrupts();
    reader.reset();  // libedit puts back the modes it found
    relay.reset();   // then the relay puts back the user's
    if (console >= 0) ::close(console);
  }
};

std::unique_ptr<ReplSession> g_session;

ReplSession& repl_session() {
  if (!g_session) throw Error(Errc::internal, "the REPL session is not open");
  return *g_session;
}

// Rank 0: how the input is read, editing on mpirun's terminal when it can (repl/terminal.hpp).
Input open_input(ReplSession& s, bool stdin_is_terminal) {
  if (stdin_is_terminal) return kEditing;
  if (!session::comm().is_mpi()) return kPipe;
  bool launcher_reads_terminal = false;
#ifdef IRIS_HAVE_LIBEDIT  // without a line editor, mpirun's plain line forwarding is better than raw keys
  s.relay = repl::TerminalRelay::start(&launcher_reads_terminal);
  if (s.relay) return kEditing;
#endif
  return launcher_reads_terminal ? kPrompts : kPipe;
}

// Collective. Rank 0 learns which ranks a Ctrl-C is forwarded to (those on its host, by process id)
// and sets a note naming the others.
void prepare_forwarding(comm::Comm& comm) {
  const std::string mine = std::to_string(::getpid()) + " " + iris_repl_host_name();
  auto processes = comm.exchange(comm::Lane::session, comm::Route::to_root, 0, "every rank's process id (REPL)",
                                 mine.data(), mine.size());
  if (comm.rank() != 0) return;
  auto host_of = [](const std::string& process) { return process.substr(process.find(' ') + 1); };
  std::vector<pid_t> local;
  std::string unreachable;
  for (int r = 1; r < comm.size(); ++r) {
    if (host_of(processes[r]) == host_of(processes[0])) {
      local.push_back(static_cast<pid_t>(std::stol(processes[r])));
    } else {
      unreachable += (unreachable.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  std::string note;
  if (!unreachable.empty()) {
    note = "iris-lua: Ctrl-C cannot reach rank(s) " + unreachable +
           " on other hosts; if they do not finish, a second Ctrl-C ends the job\n";
  }
  repl::set_interrupt_peers(local, note);
}

}  // namespace
}  // namespace iris::capi

using namespace iris;
using capi::g_session;
using capi::repl_session;

extern "C" {

int iris_repl_open(int stdin_is_terminal, int* input) {
  return capi::guarded([&] {
    if (g_session) throw Error(Errc::invalid_argument, "the REPL is already running");
    auto s = std::make_unique<capi::ReplSession>();
    comm::Comm& comm = session::comm();
    bool root = comm.rank() == 0;
    *input = capi::kPipe;
    if (root) {
      *input = capi::open_input(*s, stdin_is_terminal != 0);
      s->reader = std::make_unique<repl::LineReader>(*input == capi::kEditing, s->relay.get());
      if (*input == capi::kEditing && !s->reader->line_editing()) *input = capi::kPrompts;
      if (*input == capi::kPipe) {
        s->input_name = repl::transcript_path(false);
        if (s->input_name.empty() && comm.is_mpi()) s->input_name = repl::transcript_path(true);
      }
    }
    repl::install_interrupts(root);
    capi::prepare_forwarding(comm);
    if (root) {
      s->console = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
      repl::set_interrupt_console(s->console);
    }
    g_session = std::move(s);
  });
}

int iris_repl_close(void) {
  return capi::guarded([&] { g_session.reset(); });
}

int iris_repl_read_line(const char* prompt, int* status, const char** line, size_t* bytes) {
  return capi::guarded([&] {
    auto& s = repl_session();
    if (!s.reader) throw Error(Errc::internal, "only rank 0 reads the REPL's input");
    auto result = s.reader->read(prompt, &s.line);
    *status = result == repl::LineReader::Result::line ? 0 : result == repl::LineReader::Result::end_of_input ? 1 : 2;
    *line = s.line.c_str();
    *bytes = s.line.size();
  });
}

int iris_repl_set_completer(iris_repl_completer complete) {
  return capi::guarded([&] {
    auto& s = repl_session();
    if (!s.reader) return;
    if (complete == nullptr) {
      s.reader->set_completer(nullptr);
      return;
    }
    s.reader->set_completer([complete](const std::string& word) {
      const char* words = complete(word.c_str());
      return std::string(words != nullptr ? words : "");
    });
  });
}

const char* iris_repl_input_name(void) { return g_session ? g_session->input_name.c_str() : ""; }

int iris_repl_remember(const char* line) {
  return capi::guarded([&] {
    auto& s = repl_session();
    if (s.reader) s.reader->remember(line);
  });
}

void iris_repl_begin_command(uint32_t sequence) { repl::begin_command(sequence); }
void iris_repl_begin_running(void) { repl::begin_running(); }
void iris_repl_stop_running(void) { repl::stop_running(); }
int iris_repl_end_command(void) { return repl::end_command(); }

int iris_repl_begin_capture(void) {
  return capi::guarded([&] { repl_session().capture.start(); });
}

int iris_repl_end_capture(const char** out, size_t* out_bytes, const char** err, size_t* err_bytes) {
  return capi::guarded([&] {
    auto& s = repl_session();
    s.capture.stop(&s.captured_out, &s.captured_err);
    *out = s.captured_out.data();
    *out_bytes = s.captured_out.size();
    *err = s.captured_err.data();
    *err_bytes = s.captured_err.size();
  });
}

const char* iris_repl_host_name(void) {
  static char name[256] = {0};
  if (name[0] == '\0' && ::gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "?");
  return name;
}

int64_t iris_repl_pid(void) { return ::getpid(); }

}  // extern "C"
