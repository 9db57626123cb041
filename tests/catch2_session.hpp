// Running Catch2 from a test program's main (its implementation: tests/catch2_impl.cpp).
#pragma once

namespace iris::test {

// Catch2's session over the command line: the number of failed test cases (or of bad arguments).
// colour false: plain text, as for logs that mix several ranks' lines.
int run_catch2(int argc, char** argv, bool colour = true);

}  // namespace iris::test
