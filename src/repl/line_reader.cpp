#include "repl/line_reader.hpp"

#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>

#ifdef IRIS_HAVE_LIBEDIT
#include <histedit.h>
#endif

#include "repl/interrupts.hpp"
#include "repl/terminal.hpp"

namespace iris::repl {

#ifdef IRIS_HAVE_LIBEDIT

namespace {

constexpr int kHistorySize = 1000;

std::string history_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] == '\0') return {};
  return std::string(home) + "/.iris_lua_history";
}

}  // namespace

struct LineReader::Editor {
  TerminalRelay* relay = nullptr;  // mpirun's terminal, else standard input
  std::mbstate_t decoding{};
  EditLine* el = nullptr;
  History* hist = nullptr;
  std::string path;
  std::string prompt;
  bool interrupted = false;
  std::string previous_ctype;

  static char* current_prompt(EditLine* el) {
    Editor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return const_cast<char*>(self->prompt.c_str());
  }

  // Ctrl-C at the prompt drops what was typed (as in bash or python): the terminal delivers it as a
  // key while libedit reads (-isig), so no signal races with the editor.
  static unsigned char drop_line(EditLine* el, int) {
    Editor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    self->interrupted = true;
    return CC_EOF;
  }

  // Keys from the relay, decoded into characters as libedit's own reader does.
  static int relay_char(EditLine* el, wchar_t* out) {
    Editor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    for (;;) {
      int byte = self->relay->next_byte();
      if (byte < 0) return 0;  // end of input
      char c = static_cast<char>(byte);
      size_t used = std::mbrtowc(out, &c, 1, &self->decoding);
      if (used == static_cast<size_t>(-2)) continue;  // the middle of a multibyte character
      if (used == static_cast<size_t>(-1)) {          // not valid here: passed on as it is
        self->decoding = std::mbstate_t{};
        *out = static_cast<wchar_t>(byte);
      }
      return 1;
    }
  }

  explicit Editor(TerminalRelay* terminal_relay) : relay(terminal_relay) {
    // Multibyte input (UTF-8) needs the user's character type; the rest of the locale stays "C".
    const char* ctype = std::setlocale(LC_CTYPE, nullptr);
    previous_ctype = ctype != nullptr ? ctype : "C";
    std::setlocale(LC_CTYPE, "");
    int in_fd = relay != nullptr ? relay->terminal_fd() : STDIN_FILENO;
    el = el_init_fd("iris-lua", stdin, stdout, stderr, in_fd, STDOUT_FILENO, STDERR_FILENO);
    hist = history_init();
    HistEvent event;
    history(hist, &event, H_SETSIZE, kHistorySize);
    history(hist, &event, H_SETUNIQUE, 1);
    path = history_path();
    if (!path.empty()) history(hist, &event, H_LOAD, path.c_str());  // a missing file is a new history
    el_set(el, EL_CLIENTDATA, this);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_PROMPT, current_prompt);
    el_set(el, EL_HIST, history, hist);
    el_set(el, EL_ADDFN, "iris-drop-line", "drop the line (Ctrl-C)", drop_line);
    el_set(el, EL_BIND, "^C", "iris-drop-line", nullptr);
    el_set(el, EL_SETTY, "-d", "-isig", nullptr);
    if (relay != nullptr) {
      // Between lines libedit would put back its idea of normal modes (canonical, signal keys);
      // the relay needs every key as it comes, and Ctrl-C as a key.
      el_set(el, EL_SETTY, "-x", "-isig", "-icanon", "-echo", "-iexten", nullptr);
      el_set(el, EL_GETCFN, relay_char);
      // Ctrl-Z would stop rank 0 alone (libedit sends SIGTSTP to its own process group), where no
      // shell can resume it.
      el_set(el, EL_BIND, "^Z", "ed-unassigned", nullptr);
    }
    el_source(el, nullptr);  // ~/.editrc: the user's bindings (vi mode, ...)
  }

  ~Editor() {
    el_end(el);
    history_end(hist);
    std::setlocale(LC_CTYPE, previous_ctype.c_str());
  }

  Result read(const std::string& text, std::string* line) {
    prompt = text;
    interrupted = false;
    std::fflush(stdout);
    std::fflush(stderr);
    el_resize(el);  // the window may have changed while a chunk ran
    int count = 0;
    if (relay != nullptr) relay->set_reading_line(true);
    const char* got = el_gets(el, &count);
    if (relay != nullptr) relay->set_reading_line(false);
    if (interrupted) {
      std::fputs("^C\n", stdout);
      return Result::interrupted;
    }
    if (got == nullptr || count <= 0) {
      std::fputs("\n", stdout);  // the next output starts on a line of its own
      return Result::end_of_input;
    }
    line->assign(got, static_cast<size_t>(count));
    while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
    return Result::line;
  }

  void remember(const std::string& line) {
    HistEvent event;
    history(hist, &event, H_ENTER, line.c_str());
    if (!path.empty()) history(hist, &event, H_SAVE, path.c_str());
  }
};

LineReader::LineReader(bool editing, TerminalRelay* relay) {
  if (editing) editor_ = std::make_unique<Editor>(relay);
}

#else  // built without libedit: plain reading only

struct LineReader::Editor {};

LineReader::LineReader(bool, TerminalRelay*) {}

#endif

LineReader::~LineReader() = default;

bool LineReader::line_editing() const { return editor_ != nullptr; }

LineReader::Result LineReader::read(const std::string& prompt, std::string* line) {
#ifdef IRIS_HAVE_LIBEDIT
  if (editor_) return editor_->read(prompt, line);
#endif
  if (!prompt.empty()) {
    std::fputs(prompt.c_str(), stdout);
    std::fflush(stdout);
  }
  std::fflush(stderr);
  // Through stdin's FILE, so that io.read() in a chunk and the REPL share one buffer.
  line->clear();
  begin_reading();
  bool got_any = false;
  int c;
  while ((c = std::fgetc(stdin)) != EOF) {
    got_any = true;
    if (c == '\n') break;
    line->push_back(static_cast<char>(c));
  }
  bool interrupted = end_reading();
  if (interrupted || (c == EOF && std::ferror(stdin) && errno == EINTR)) {
    std::clearerr(stdin);
    if (!prompt.empty()) std::fputs("^C\n", stdout);
    return Result::interrupted;
  }
  if (!got_any) return Result::end_of_input;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return Result::line;
}

void LineReader::remember(const std::string& line) {
#ifdef IRIS_HAVE_LIBEDIT
  if (editor_) editor_->remember(line);
#else
  (void)line;
#endif
}

}  // namespace iris::repl
