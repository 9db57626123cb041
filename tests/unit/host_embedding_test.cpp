// A C++ program embeds the host: adds its own functions and modules, runs code, reads errors.
#include <catch2/catch.hpp>
#include <lua.hpp>

#include "iris/host.hpp"

namespace {

int answer(lua_State* L) {
  lua_pushinteger(L, 42);
  return 1;
}

int open_greeter(lua_State* L) {
  lua_newtable(L);
  lua_pushliteral(L, "hello from C++");
  lua_setfield(L, -2, "greeting");
  return 1;
}

// Every test leaves the Lua stack as it found it: call check() before host.finish().
struct BalancedStack {
  explicit BalancedStack(iris::Host& h) : host(h), top(lua_gettop(h.lua_state())) {}
  void check() const { CHECK(lua_gettop(host.lua_state()) == top); }
  iris::Host& host;
  int top;
};

}  // namespace

TEST_CASE("an embedding program runs Lua with its own functions and modules", "[unit][host]") {
  iris::Host host;
  BalancedStack balanced(host);
  host.add_function("answer", answer);
  host.add_module("greeter", open_greeter);

  iris::RunResult r = host.run_string("result = answer() + 1; greeting = require('greeter').greeting");
  REQUIRE(r.ok());
  lua_State* L = host.lua_state();
  lua_getglobal(L, "result");
  CHECK(lua_tointeger(L, -1) == 43);
  lua_getglobal(L, "greeting");
  CHECK(std::string(lua_tostring(L, -1)) == "hello from C++");
  lua_pop(L, 2);
  CHECK(host.rank() == 0);
  CHECK(host.world_size() == 1);
  balanced.check();
  CHECK(host.finish() == 0);
}

TEST_CASE("a script error comes back with its line, traceback and exit code 1", "[unit][host]") {
  iris::Host host;
  BalancedStack balanced(host);
  iris::RunResult r = host.run_string("local function f()\n  error('bad thing')\nend\nf()", "=embedded");
  CHECK(r.exit_code == 1);
  CHECK(r.message == "embedded:2: bad thing");
  CHECK(r.traceback.find("stack traceback:") != std::string::npos);
  CHECK(host.describe(r).rfind("iris-lua[rank 0]: embedded:2: bad thing\nstack traceback:", 0) == 0);
  balanced.check();
  host.finish();
}

TEST_CASE("a syntax error or a missing file is a usage error (exit code 2)", "[unit][host]") {
  iris::Host host;
  BalancedStack balanced(host);
  iris::RunResult syntax = host.run_string("local = 1", "=broken");
  CHECK(syntax.exit_code == 2);
  CHECK(syntax.message.find("broken:1:") == 0);
  iris::RunResult missing = host.run_file("/nonexistent/script.lua");
  CHECK(missing.exit_code == 2);
  CHECK(missing.message.find("cannot open /nonexistent/script.lua") != std::string::npos);
  balanced.check();
  host.finish();
}

TEST_CASE("the iris module is loaded as a global and by require", "[unit][host][lua]") {
  iris::Host host;
  BalancedStack balanced(host);
  iris::RunResult r = host.run_string(
      "assert(iris == require('iris'))\n"
      "assert(iris.rank() == 0 and iris.world_size() == 1)\n"
      "assert(type(iris.version) == 'string')\n"
      "assert(iris.cdiv(1000, 256) == 4 and iris.cdiv(1024, 256) == 4)");
  INFO(r.message);
  CHECK(r.ok());
  balanced.check();
  host.finish();
}

TEST_CASE("iris errors name the user's line, not the iris module's", "[unit][host][lua]") {
  iris::Host host;
  BalancedStack balanced(host);
  iris::RunResult r = host.run_string("local x = 1\niris.cdiv(1, 0)", "=user.lua");
  CHECK(r.exit_code == 1);
  CHECK(r.message == "user.lua:2: iris.cdiv(a, b): b must be positive, got 0");
  balanced.check();
  host.finish();
}
