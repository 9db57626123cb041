// The iris-lua command line (README.md, "Running"): parses options the way luajit does and drives
// a Host through them.
#pragma once

namespace iris::cli {

// Runs the whole command line; returns the process exit code (0, 1 or 2).
int main(int argc, char** argv);

}  // namespace iris::cli
