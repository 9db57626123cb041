// Catch2 main for tests that run under mpirun: every rank runs every test case in the same order, so
// collectives inside the tests meet. MPI is initialized here; the tests' Comm adopts it.
#include "catch2_session.hpp"  // Catch2 (its implementation: tests/catch2_impl.cpp)
// The C API of MPI only (the C++ bindings need a library the build does not link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int result = iris::test::run_catch2(argc, argv);
  // A rank whose checks failed must fail the whole mpirun, even if the others passed.
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
