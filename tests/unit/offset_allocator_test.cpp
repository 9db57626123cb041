// The offset allocator alone: best fit, coalescing, alignment, statistics, determinism.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "core/error.hpp"
#include "heap/offset_allocator.hpp"

using iris::heap::OffsetAllocator;

TEST_CASE("offsets are aligned, rounded up and inside the managed range", "[unit][heap]") {
  OffsetAllocator a(1000, 1000 + 8192, 256);  // begin rounds up to 1024, end down to 9088 & ~255 = 8960
  auto s = a.stats();
  CHECK(s.capacity == 8960 - 1024);
  auto x = a.allocate(1);
  auto y = a.allocate(300);
  auto z = a.allocate(0);
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(z);
  CHECK(*x == 1024);
  CHECK(*y == 1024 + 256);
  CHECK(*z == 1024 + 256 + 512);  // 300 bytes took two units; 0 bytes takes one unit of its own
  CHECK(a.block_size(*y) == 512);
  for (size_t offset : {*x, *y, *z}) CHECK(offset % 256 == 0);
}

TEST_CASE("best fit takes the smallest free block that fits, the lowest offset among equals", "[unit][heap]") {
  OffsetAllocator a(0, 100 * 256, 256);
  std::vector<size_t> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(*a.allocate(256 * (i % 3 + 1)));
  // free holes of 3, 1 and 1 units (blocks 2, 3 and 6), plus the tail
  a.release(blocks[2]);
  a.release(blocks[3]);  // adjacent to blocks[2]: one hole of 3 + 1 = 4 units
  a.release(blocks[6]);  // 1 unit
  a.release(blocks[9]);  // 1 unit, adjacent to the tail: merges with it
  auto s = a.stats();
  CHECK(s.free_blocks == 3);  // the 4-unit hole, block 6's hole, and the tail that absorbed block 9
  // one unit: best fit is block 6's hole (1 unit), not the 4-unit hole
  CHECK(*a.allocate(200) == blocks[6]);
  // two units: best fit is the 4-unit hole (the tail is bigger)
  CHECK(*a.allocate(512) == blocks[2]);
}

TEST_CASE("released neighbours coalesce into one block on both sides", "[unit][heap]") {
  OffsetAllocator a(0, 4 * 1024, 256);
  auto p = *a.allocate(1024);
  auto q = *a.allocate(1024);
  auto r = *a.allocate(1024);
  auto t = *a.allocate(1024);
  CHECK(!a.allocate(1));
  a.release(p);
  a.release(r);
  CHECK(a.stats().largest_free == 1024);
  a.release(q);  // joins p and r
  CHECK(a.stats().largest_free == 3 * 1024);
  CHECK(a.stats().free_blocks == 1);
  a.release(t);
  CHECK(a.stats().largest_free == 4 * 1024);
  CHECK(*a.allocate(4 * 1024) == 0);
}

TEST_CASE("statistics count free bytes, the largest free block and allocations", "[unit][heap]") {
  OffsetAllocator a(0, 64 * 1024, 256);
  auto x = *a.allocate(8 * 1024);
  auto y = *a.allocate(8 * 1024);
  (void)y;
  a.release(x);
  auto s = a.stats();
  CHECK(s.capacity == 64 * 1024);
  CHECK(s.allocated_bytes == 8 * 1024);
  CHECK(s.allocated_blocks == 1);
  CHECK(s.free_bytes == 56 * 1024);
  CHECK(s.largest_free == 48 * 1024);
  CHECK(s.free_blocks == 2);
  CHECK(!a.allocate(48 * 1024 + 1));
}

TEST_CASE("releasing an offset that is not an allocated block is an internal error", "[unit][heap]") {
  OffsetAllocator a(0, 4096, 256);
  auto x = *a.allocate(100);
  CHECK_THROWS_AS(a.release(x + 256), iris::Error);
  a.release(x);
  CHECK_THROWS_AS(a.release(x), iris::Error);
}

TEST_CASE("a huge request never fits and never wraps around", "[unit][heap]") {
  OffsetAllocator a(0, 4096, 256);
  CHECK(!a.allocate(SIZE_MAX));
  CHECK(!a.allocate(SIZE_MAX - 100));
  CHECK(a.stats().free_bytes == 4096);
}

TEST_CASE("the same calls give the same offsets in two allocators", "[unit][heap]") {
  OffsetAllocator a(64 * 1024, 16 << 20, 256), b(64 * 1024, 16 << 20, 256);
  std::mt19937 random(7);
  std::vector<size_t> live;
  for (int step = 0; step < 5000; ++step) {
    if (!live.empty() && random() % 3 == 0) {
      size_t i = random() % live.size();
      a.release(live[i]);
      b.release(live[i]);
      live.erase(live.begin() + static_cast<long>(i));
    } else {
      size_t bytes = random() % 20000;
      auto x = a.allocate(bytes);
      auto y = b.allocate(bytes);
      REQUIRE(x.has_value() == y.has_value());
      if (x) {
        REQUIRE(*x == *y);
        live.push_back(*x);
      }
    }
  }
  for (size_t offset : live) a.release(offset);
  CHECK(a.stats().free_blocks == 1);
  CHECK(a.stats().free_bytes == a.stats().capacity);
}
