// A host collective's mismatch: the message names both collectives, and its facts (this rank's
// collective, the peer in another, the peer's) reach Lua through the C API, for the test runner.
#include <catch2/catch.hpp>

#include <string>

#include "capi/guard.hpp"
#include "capi/iris_capi.h"
#include "core/error.hpp"
#include "mpi_fixture.hpp"

using iris::CollectiveMismatch;
using iris::Errc;
using iris::testing::test_comm;

TEST_CASE("ranks in different collectives get a mismatch naming both, with its facts in the C API", "[mpi]") {
  auto& comm = test_comm();
  if (comm.size() < 2) return;
  const int last = comm.size() - 1;
  const std::string mine = comm.rank() == last ? "mismatch test: B" : "mismatch test: A";
  const std::string theirs = comm.rank() == last ? "mismatch test: A" : "mismatch test: B";
  const int peer = comm.rank() == last ? 0 : last; // the first rank in the other collective
  try {
    comm.announce(mine, 0);
    FAIL("no error");
  } catch (const CollectiveMismatch& e) {
    CHECK(e.code() == Errc::divergence);
    CHECK(std::string(e.what()) == "collective mismatch: this rank is in " + mine + " but rank " + std::to_string(peer) +
                                       " is in " + theirs +
                                       " (every rank must make the same collective calls in the same order)");
    CHECK(e.op() == mine);
    CHECK(e.peer() == peer);
    CHECK(e.peer_op() == theirs);

    iris::capi::set_last_error(e);
    const char* op = nullptr;
    const char* peer_op = nullptr;
    int peer_rank = -1;
    REQUIRE(iris_last_divergence(&op, &peer_rank, &peer_op) == 1);
    CHECK(std::string(iris_last_error_kind()) == "divergence");
    CHECK(std::string(op) == mine);
    CHECK(peer_rank == peer);
    CHECK(std::string(peer_op) == theirs);
    // Any later error is another error: the facts go with the mismatch.
    iris::capi::set_last_error(iris::Error(Errc::divergence, "ranks asked different sizes"));
    CHECK(iris_last_divergence(&op, &peer_rank, &peer_op) == 0);
  }
  comm.barrier("mismatch test: after"); // every rank saw the same headers: the ranks are in step again
}
