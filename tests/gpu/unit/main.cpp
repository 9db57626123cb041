// Tests of the GPU backends' parts that need no GPU: they run everywhere, CI included. Catch2's session
// (its implementation is tests/catch2_impl.cpp).
#include "catch2_session.hpp"

int main(int argc, char** argv) { return iris::test::run_catch2(argc, argv); }
