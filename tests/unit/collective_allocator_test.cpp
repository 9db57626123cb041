// The release protocol's logic, with every rank simulated in one process: releases at different
// moments per rank, blocks returning only once every rank released them, identical state everywhere.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "core/error.hpp"
#include "heap/collective_allocator.hpp"

using iris::heap::CollectiveAllocator;

namespace {

// N ranks' states and the exchange SymmetricHeap runs before each allocation.
struct SimulatedRanks {
  explicit SimulatedRanks(int n) {
    for (int r = 0; r < n; ++r) ranks.emplace_back(0, 1 << 20, 256, n, r);
  }
  void exchange() {
    std::vector<std::vector<uint64_t>> lists;
    for (auto& rank : ranks) lists.push_back(rank.take_pending());
    for (auto& rank : ranks) rank.apply_releases(lists);
  }
  std::optional<size_t> allocate(size_t bytes) {
    exchange();
    std::optional<size_t> first = ranks[0].allocate(bytes);
    for (size_t r = 1; r < ranks.size(); ++r) {
      auto other = ranks[r].allocate(bytes);
      REQUIRE(other == first);
    }
    return first;
  }
  std::vector<CollectiveAllocator> ranks;
};

}  // namespace

TEST_CASE("a block released by one rank is not reused until every rank released it", "[unit][heap]") {
  SimulatedRanks job(3);
  size_t x = *job.allocate(1000);
  job.ranks[0].release_local(x);
  job.ranks[2].release_local(x);
  size_t y = *job.allocate(1000);
  CHECK(y != x);
  CHECK(job.ranks[1].awaiting_other_ranks() == 1);
  job.ranks[1].release_local(x);
  size_t z = *job.allocate(1000);
  CHECK(z == x);  // best fit: x's hole is the smallest block that fits
  CHECK(job.ranks[0].awaiting_other_ranks() == 0);
}

TEST_CASE("releases wait for the next exchange, and the queue empties there", "[unit][heap]") {
  SimulatedRanks job(2);
  size_t x = *job.allocate(256);
  job.ranks[0].release_local(x);
  job.ranks[1].release_local(x);
  CHECK(job.ranks[0].pending() == 1);
  CHECK(job.ranks[0].stats().allocated_blocks == 1);  // nothing moves before the exchange
  job.exchange();
  CHECK(job.ranks[0].pending() == 0);
  CHECK(job.ranks[0].stats().allocated_blocks == 0);
  CHECK(job.ranks[1].stats().free_blocks == 1);
}

TEST_CASE("a rank releasing a block twice, or one never allocated, is an internal error", "[unit][heap]") {
  SimulatedRanks job(2);
  size_t x = *job.allocate(256);
  job.ranks[0].release_local(x);
  CHECK_THROWS_AS(job.ranks[0].release_local(x), iris::Error);
  CHECK_THROWS_AS(job.ranks[1].release_local(x + 256), iris::Error);
  // the same mistake arriving through the exchange is caught on every rank alike
  std::vector<std::vector<uint64_t>> lists = {{x}, {x, x}};
  CHECK_THROWS_AS(job.ranks[0].apply_releases(lists), iris::Error);
}

TEST_CASE("random releases at different moments per rank keep every rank's state identical", "[unit][heap]") {
  const int n = 4;
  SimulatedRanks job(n);
  std::mt19937 random(11);
  // live[r]: blocks rank r still holds (each rank "collects" its garbage at its own pace)
  std::vector<std::vector<size_t>> live(n);
  size_t allocations = 0, failures = 0;
  for (int step = 0; step < 4000; ++step) {
    for (int r = 0; r < n; ++r) {
      while (!live[r].empty() && random() % 4 == 0) {
        size_t i = random() % live[r].size();
        job.ranks[r].release_local(live[r][i]);
        live[r].erase(live[r].begin() + static_cast<long>(i));
      }
    }
    size_t bytes = 256 + random() % 30000;
    auto offset = job.allocate(bytes);
    if (offset) {
      ++allocations;
      for (int r = 0; r < n; ++r) live[r].push_back(*offset);
    } else {
      ++failures;
    }
    auto reference = job.ranks[0].stats();
    for (int r = 1; r < n; ++r) {
      auto s = job.ranks[r].stats();
      REQUIRE(s.free_bytes == reference.free_bytes);
      REQUIRE(s.largest_free == reference.largest_free);
      REQUIRE(s.allocated_blocks == reference.allocated_blocks);
    }
  }
  CHECK(allocations > 1000);
  // everything released everywhere: the heap is one free block again
  for (int r = 0; r < n; ++r) {
    for (size_t offset : live[r]) job.ranks[r].release_local(offset);
  }
  job.exchange();
  for (auto& rank : job.ranks) {
    CHECK(rank.stats().allocated_blocks == 0);
    CHECK(rank.stats().free_blocks == 1);
    CHECK(rank.awaiting_other_ranks() == 0);
  }
  INFO("allocations " << allocations << ", out of heap " << failures);
}

TEST_CASE("the order in which blocks complete does not change the resulting free list", "[unit][heap]") {
  // Rank 0 releases a then b, rank 1 releases b then a: the blocks come back in ascending order.
  SimulatedRanks job(2);
  size_t a = *job.allocate(256);
  size_t b = *job.allocate(256);
  size_t keep = *job.allocate(256);
  (void)keep;
  job.ranks[0].release_local(a);
  job.ranks[0].release_local(b);
  job.ranks[1].release_local(b);
  job.ranks[1].release_local(a);
  job.exchange();
  CHECK(job.ranks[0].stats().largest_free == job.ranks[1].stats().largest_free);
  CHECK(*job.allocate(512) == a);  // a and b coalesced into one block of two units
}
