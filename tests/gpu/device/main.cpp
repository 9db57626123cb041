// The GPU device tests: one executable, run at 1, 2 and 4 ranks (tests/gpu/CMakeLists.txt).
//   iris_gpu_tests --probe gpu|ptx   whether this machine can run them (exit 77: skip, with the reason)
//   iris_gpu_tests [Catch2 arguments]
#include "catch2_session.hpp"  // Catch2 (its implementation: tests/catch2_impl.cpp)

#include <cstdio>
#include <cstring>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "gpu_session.hpp"

int main(int argc, char** argv) {
  using namespace iris;
  // Line by line: mpirun forwards several ranks' output into one log.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc >= 2 && std::strcmp(argv[1], "--probe") == 0) return gpu_test::probe(argc >= 3 ? argv[2] : "gpu");

  std::unique_ptr<comm::Comm> comm = comm::Comm::create(&argc, &argv);
  log::set_rank(comm->rank(), comm->size());
  log::configure_from_environment();
  gpu_test::start(*comm);
  int failed = test::run_catch2(argc, argv, false);  // no colour: logs from several ranks, not a terminal
  try {
    gpu_test::end();
  } catch (const Error& e) {
    std::fprintf(stderr, "rank %d: ending the GPU session: %s\n", comm->rank(), e.what());
    ++failed;
  }
  comm->finish();
  comm->finalize();
  return failed == 0 ? 0 : 1;
}
