#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/units.hpp"

TEST_CASE("byte sizes are read with and without units", "[unit][core]") {
  CHECK(iris::parse_byte_size("1073741824", "heap_size") == 1073741824ull);
  CHECK(iris::parse_byte_size("512MiB", "heap_size") == 512ull << 20);
  CHECK(iris::parse_byte_size("1GiB", "heap_size") == 1ull << 30);
  CHECK(iris::parse_byte_size("1.5 GiB", "heap_size") == 3ull << 29);
  CHECK(iris::parse_byte_size("64kib", "heap_size") == 64ull << 10);
  CHECK(iris::parse_byte_size("2GB", "heap_size") == 2000000000ull);
}

TEST_CASE("unreadable sizes are errors naming the setting", "[unit][core]") {
  CHECK_THROWS_WITH(iris::parse_byte_size("lots", "heap_size"), Catch::Contains("heap_size: cannot read 'lots'"));
  CHECK_THROWS_WITH(iris::parse_byte_size("12 parsecs", "heap_size"), Catch::Contains("cannot read"));
  CHECK_THROWS_WITH(iris::parse_byte_size("-1MiB", "heap_size"), Catch::Contains("cannot read"));
  CHECK_THROWS_WITH(iris::parse_byte_size("0.3", "heap_size"), Catch::Contains("cannot read"));
}

TEST_CASE("sizes in messages read like a person wrote them", "[unit][core]") {
  CHECK(iris::human_bytes(256) == "256 B");
  CHECK(iris::human_bytes(64ull << 20) == "64 MiB");
  CHECK(iris::human_bytes(3ull << 29) == "1.5 GiB");
}
