#include "comm/mpi_collectives.hpp"

#include <mpi.h>

#include <utility>

#include "comm/comm.hpp"
#include "comm/mpi_support.hpp"
#include "core/error.hpp"

namespace iris::comm {
namespace {

// MPI's type of a dtype name (bool as uint8; MPI has no 16-bit floats) and its reduction of an op name.
MPI_Datatype mpi_type(const std::string& dtype) {
  const std::pair<const char*, MPI_Datatype> types[] = {
      {"bool", MPI_UINT8_T},    {"uint8", MPI_UINT8_T},   {"int8", MPI_INT8_T},   {"int16", MPI_INT16_T},
      {"int32", MPI_INT32_T},   {"uint32", MPI_UINT32_T}, {"int64", MPI_INT64_T}, {"uint64", MPI_UINT64_T},
      {"float32", MPI_FLOAT},   {"float64", MPI_DOUBLE}};
  for (const auto& [name, type] : types) if (dtype == name) return type;
  throw Error(Errc::invalid_argument, "MPI has no " + dtype + " type");
}

MPI_Op mpi_op(const std::string& op) {
  const std::pair<const char*, MPI_Op> ops[] = {{"sum", MPI_SUM}, {"prod", MPI_PROD}, {"min", MPI_MIN}, {"max", MPI_MAX},
                                                {"band", MPI_BAND}, {"bor", MPI_BOR}, {"bxor", MPI_BXOR}};
  for (const auto& [name, mpi] : ops) if (op == name) return mpi;
  throw Error(Errc::invalid_argument, "MPI has no " + op + " reduction");
}

}  // namespace

struct MpiCollectives::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
};

MpiCollectives::MpiCollectives(const Comm& comm) : impl_(std::make_unique<Impl>()) {
  if (!comm.is_mpi()) throw Error(Errc::environment, "MPI is not running (one rank without mpirun)");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm), "MPI_Comm_dup");
}

MpiCollectives::~MpiCollectives() {
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

void MpiCollectives::run(const std::string& collective, const void* send, void* recv, uint64_t count,
                         const std::string& dtype, const std::string& op, int root) {
  const MPI_Datatype type = mpi_type(dtype);
  const int n = static_cast<int>(count);
  const void* in = send == recv ? MPI_IN_PLACE : send;
  const MPI_Comm comm = impl_->comm;
  if (collective == "all_reduce") {
    check_mpi(MPI_Allreduce(in, recv, n, type, mpi_op(op), comm), "MPI_Allreduce");
  } else if (collective == "all_gather") {
    check_mpi(MPI_Allgather(send, n, type, recv, n, type, comm), "MPI_Allgather");
  } else if (collective == "reduce_scatter") {
    check_mpi(MPI_Reduce_scatter_block(send, recv, n, type, mpi_op(op), comm), "MPI_Reduce_scatter_block");
  } else if (collective == "all_to_all") {
    check_mpi(MPI_Alltoall(send, n, type, recv, n, type, comm), "MPI_Alltoall");
  } else if (collective == "broadcast") {
    check_mpi(MPI_Bcast(recv, n, type, root, comm), "MPI_Bcast");
  } else if (collective == "reduce") {
    check_mpi(MPI_Reduce(in, recv, n, type, mpi_op(op), root, comm), "MPI_Reduce");
  } else if (collective == "gather") {
    check_mpi(MPI_Gather(send, n, type, recv, n, type, root, comm), "MPI_Gather");
  } else if (collective == "scatter") {
    check_mpi(MPI_Scatter(send, n, type, recv, n, type, root, comm), "MPI_Scatter");
  } else if (collective == "send_recv") {  // a ring: to the next rank, from the previous one
    int me = 0, size = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    check_mpi(MPI_Sendrecv(send, n, type, (me + 1) % size, 0, recv, n, type, (me + size - 1) % size, 0, comm,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  } else {
    throw Error(Errc::invalid_argument, "no reference for collective '" + collective + "'");
  }
}

}  // namespace iris::comm
