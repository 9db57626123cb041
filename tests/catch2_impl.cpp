// Catch2's implementation, compiled once for every Catch2 test program (cmake/IrisTesting.cmake,
// iris_catch2_tests): compiled in each program's main.cpp, as CATCH_CONFIG_MAIN and CATCH_CONFIG_RUNNER
// do, it was the build's slowest object four times over (about 60 s each on a 2-core CI machine).
// Catch2 2.x declares its Session only where its implementation is, so the mains call it through here.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch2_session.hpp"

namespace iris::test {

int run_catch2(int argc, char** argv, bool colour) {
  Catch::Session session;
  if (!colour) session.configData().useColour = Catch::UseColour::No;
  const int failed = session.applyCommandLine(argc, argv);
  return failed != 0 ? failed : session.run();
}

}  // namespace iris::test
