// iris-lua: everything lives in the host library; see src/host/cli.cpp.
#include "host/cli.hpp"

int main(int argc, char** argv) { return iris::cli::main(argc, argv); }
