// Which frames of a Lua stack are the user's: the one rule behind every traceback iris prints. Errors,
// the REPL and the test runner reach it through iris.errors (the host's iris.host.user_frames and
// is_iris_chunk); hang reports call it here directly, on a stack they may only read.
//
// The rule: iris's own Lua frames go (its embedded modules, chunks named "=iris...", and the host's
// glue, "=(host)"); a C function goes too unless the user's code called it and the user's code lies
// beneath it (error or pcall inside iris, and the host's entry, go; the user's pcall, error or a gsub
// callback stays). An error iris did not raise on purpose whose innermost Lua frame is iris's keeps
// every frame: that is a bug in iris, and its frames are where to look.
#pragma once

#include <string>
#include <vector>

struct lua_State;

namespace iris::host {

struct StackFrame {
  std::string line;  // as luaL_traceback words it: "script.lua:12: in function 'f'"
  bool c = false;    // a C function
  bool iris = false;  // a Lua frame of one of iris's chunks
};

// A chunk of iris's own, by its chunk name (lua_Debug::source).
bool is_iris_chunk(const char* source);

// L's frames from `level` (lua_getstack's count) outwards, innermost first; with `outermost` (a stack
// index of L, 0 for none), up to the frame running that function.
std::vector<StackFrame> stack_of(lua_State* L, int level, int outermost = 0);

// The frames of `stack` a user reads (the rule above). `deliberate`: the error was raised on purpose
// (or it is no error: a hang report), so iris's frames go even when they are innermost.
std::vector<StackFrame> user_frames(const std::vector<StackFrame>& stack, bool deliberate);

}  // namespace iris::host
