// Which frames of a Lua stack are the user's (host/user_frames.hpp): the one rule behind error
// tracebacks (through iris.errors) and hang reports.
#include <catch2/catch.hpp>
#include <lua.hpp>

#include <string>
#include <vector>

#include "host/user_frames.hpp"

using iris::host::StackFrame;

namespace {

StackFrame user(const std::string& line) { return {line, false, false}; }
StackFrame iris_lua(const std::string& line) { return {line, false, true}; }
StackFrame c(const std::string& line) { return {line, true, false}; }

std::vector<std::string> lines(const std::vector<StackFrame>& frames) {
  std::vector<std::string> out;
  for (const StackFrame& f : frames) out.push_back(f.line);
  return out;
}

std::vector<StackFrame> g_seen;
int remember_stack(lua_State* L) {
  g_seen = iris::host::stack_of(L, 0);
  return 0;
}

}  // namespace

TEST_CASE("iris's chunks are its embedded modules and the host's glue", "[unit][host]") {
  CHECK(iris::host::is_iris_chunk("=iris/context.lua"));
  CHECK(iris::host::is_iris_chunk("=iris"));
  CHECK(iris::host::is_iris_chunk("=(host)"));
  CHECK_FALSE(iris::host::is_iris_chunk("@script.lua"));
  CHECK_FALSE(iris::host::is_iris_chunk("=(command line)"));
  CHECK_FALSE(iris::host::is_iris_chunk("@iris/context.lua"));  // a user's file of that name
}

TEST_CASE("a user's frames keep the C functions the user called, not those iris called", "[unit][host]") {
  // error() raised by iris's check inside ctx:barrier(), called from the user's pcall, under the host.
  const std::vector<StackFrame> stack = {c("[C]: in function 'error'"),   iris_lua("iris/errors.lua:9: in function 'check'"),
                                         c("[C]: in function 'wait'"),    iris_lua("iris/context.lua:5: in function 'barrier'"),
                                         user("s.lua:3: in function <s.lua:2>"), c("[C]: in function 'pcall'"),
                                         user("s.lua:7: in main chunk"),  c("[C]: ?")};
  CHECK(lines(iris::host::user_frames(stack, true)) ==
        std::vector<std::string>{"s.lua:3: in function <s.lua:2>", "[C]: in function 'pcall'", "s.lua:7: in main chunk"});
  // The user's own error() stays: the user called it.
  const std::vector<StackFrame> own = {c("[C]: in function 'error'"), user("s.lua:2: in main chunk"), c("[C]: ?")};
  CHECK(lines(iris::host::user_frames(own, false)) ==
        std::vector<std::string>{"[C]: in function 'error'", "s.lua:2: in main chunk"});
}

TEST_CASE("an error iris did not mean that comes from inside iris keeps every frame", "[unit][host]") {
  const std::vector<StackFrame> stack = {iris_lua("iris/tensor.lua:40: in function 'fill'"), user("s.lua:2: in main chunk")};
  CHECK(iris::host::user_frames(stack, false).size() == 2);
  CHECK(lines(iris::host::user_frames(stack, true)) == std::vector<std::string>{"s.lua:2: in main chunk"});
}

TEST_CASE("a stack is read innermost first, worded as luaL_traceback words it", "[unit][host]") {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "remember_stack", remember_stack);
  const char* chunk = "local function inner() remember_stack() end\ninner()\n";
  REQUIRE(luaL_loadbuffer(L, chunk, std::char_traits<char>::length(chunk), "@s.lua") == 0);
  REQUIRE(lua_pcall(L, 0, 0, 0) == 0);
  lua_close(L);
  REQUIRE(g_seen.size() >= 3);
  CHECK(g_seen[0].c);
  CHECK(g_seen[0].line == "[C]: in function 'remember_stack'");
  CHECK(g_seen[1].line == "s.lua:1: in function 'inner'");
  CHECK(g_seen[2].line == "s.lua:2: in main chunk");
  CHECK(lines(iris::host::user_frames(g_seen, true)) ==
        std::vector<std::string>{"[C]: in function 'remember_stack'", "s.lua:1: in function 'inner'", "s.lua:2: in main chunk"});
}
