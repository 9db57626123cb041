// heap::all_or_none: a step every rank runs, failing on every rank when it failed on any.
#include <catch2/catch.hpp>

#include <string>

#include "core/error.hpp"
#include "heap/all_or_none.hpp"
#include "mpi_fixture.hpp"

using iris::Errc;
using iris::Error;
using iris::testing::test_comm;

TEST_CASE("a step that succeeds everywhere costs one collective, its announcement", "[mpi]") {
  auto& comm = test_comm();
  // Rank 0 runs the step; the others only announce it. Had the step any collective after its
  // announcement, the barrier below would pair with it and fail.
  if (comm.rank() == 0) {
    iris::heap::all_or_none(comm, "all_or_none test: step", [] {});
  } else {
    comm.announce("all_or_none test: step", 0);
  }
  comm.barrier("all_or_none test: after the step");
}

TEST_CASE("a step that fails on one rank fails on every rank, with that rank's kind and message", "[mpi]") {
  auto& comm = test_comm();
  const int failing = comm.size() - 1;
  try {
    iris::heap::all_or_none(comm, "all_or_none test: failing step", [&] {
      if (comm.rank() == failing) throw Error(Errc::environment, "no room here");
    });
    FAIL("the step succeeded");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::environment);
    if (comm.rank() == failing) {
      CHECK(std::string(e.what()) == "no room here");
    } else {
      CHECK(std::string(e.what()) ==
            "rank " + std::to_string(failing) + " failed in all_or_none test: failing step: no room here");
    }
  }
  comm.barrier("all_or_none test: after the failing step");
}
