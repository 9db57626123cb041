#include "repl/line_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <vector>

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

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string common_prefix(const std::vector<std::string>& words) {
  std::string prefix = words.front();
  for (const std::string& w : words) {
    size_t n = 0;
    while (n < prefix.size() && n < w.size() && prefix[n] == w[n]) ++n;
    prefix.resize(n);
  }
  return prefix;
}

// The candidates below the line, in columns as wide as the longest, for a terminal of `width`.
void list_candidates(const std::vector<std::string>& words, int width) {
  size_t widest = 0;
  for (const std::string& w : words) widest = std::max(widest, w.size());
  const size_t column = widest + 2;
  const size_t per_line = std::max<size_t>(1, static_cast<size_t>(width > 0 ? width : 80) / column);
  std::fputs("\n", stdout);
  for (size_t i = 0; i < words.size(); ++i) {
    if ((i + 1) % per_line == 0 || i + 1 == words.size()) {
      std::fprintf(stdout, "%s\n", words[i].c_str());
    } else {
      std::fprintf(stdout, "%-*s", static_cast<int>(column), words[i].c_str());
    }
  }
  std::fflush(stdout);
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
  Completer completer;

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

  // Tab: the word before the cursor completed, or the ways it could be completed listed.
  static unsigned char complete(EditLine* el, int) {
    Editor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    if (!self->completer) return CC_ERROR;
    const LineInfo* info = el_line(el);
    const char* start = info->cursor;
    while (start > info->buffer && is_word_char(start[-1])) --start;
    const std::string word(start, info->cursor);
    const std::vector<std::string> candidates = split_lines(self->completer(word));
    if (candidates.empty()) return CC_REFRESH_BEEP;
    const std::string prefix = common_prefix(candidates);
    if (prefix.size() > word.size() && prefix.compare(0, word.size(), word) == 0) {
      if (el_insertstr(el, prefix.c_str() + word.size()) != 0) return CC_ERROR;
      return CC_REFRESH;
    }
    if (candidates.size() == 1) return CC_REFRESH;  // complete already
    int width = 80;
    el_get(el, EL_GETTC, "co", &width);
    list_candidates(candidates, width);
    return CC_REDISPLAY;
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
    el_set(el, EL_ADDFN, "iris-complete", "complete the word (Tab)", complete);
    el_set(el, EL_BIND, "^I", "iris-complete", nullptr);
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

void LineReader::set_completer(Completer complete) {
  if (editor_) editor_->completer = std::move(complete);
}

#else  // built without libedit: plain reading only

struct LineReader::Editor {};

LineReader::LineReader(bool, TerminalRelay*) {}

void LineReader::set_completer(Completer) {}

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
