// Tests of the GPU backends' parts that need no GPU: they run everywhere, CI included.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
