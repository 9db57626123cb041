#include "comm/mpi_collectives.hpp"

#include <mpi.h>

#include <cstring>
#include <utility>

#include "comm/comm.hpp"
#include "comm/mpi_support.hpp"
#include "core/error.hpp"
#include "core/small_floats.hpp"

namespace iris::comm {
namespace {

// MPI's type of a dtype name (bool as uint8; the 16-bit floats, which MPI lacks, as 16-bit words that
// the reductions below decode) and its reduction of an op name.
MPI_Datatype mpi_type(const std::string& dtype) {
  const std::pair<const char*, MPI_Datatype> types[] = {
      {"bool", MPI_UINT8_T},      {"uint8", MPI_UINT8_T},   {"int8", MPI_INT8_T},   {"int16", MPI_INT16_T},
      {"int32", MPI_INT32_T},     {"uint32", MPI_UINT32_T}, {"int64", MPI_INT64_T}, {"uint64", MPI_UINT64_T},
      {"float32", MPI_FLOAT},     {"float64", MPI_DOUBLE},  {"float16", MPI_UINT16_T},
      {"bfloat16", MPI_UINT16_T}};
  for (const auto& [name, type] : types) if (dtype == name) return type;
  throw Error(Errc::invalid_argument, "MPI has no " + dtype + " type");
}

bool is_16_bit_float(const std::string& dtype) { return dtype == "float16" || dtype == "bfloat16"; }

// The reductions of 16-bit floats, as MPI user operations: each pair of elements decoded, combined in
// double and rounded back (what the GPU libraries do in float32, one rounding per step either way).
enum class Combine { sum, prod, min, max };
template <double (*Decode)(uint16_t), uint16_t (*Encode)(double), Combine How>
void combine_16(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) {
    const double x = Decode(a[i]), y = Decode(b[i]);
    double r = 0;
    if constexpr (How == Combine::sum) r = x + y;
    if constexpr (How == Combine::prod) r = x * y;
    if constexpr (How == Combine::min) r = x < y ? x : y;
    if constexpr (How == Combine::max) r = x > y ? x : y;
    b[i] = Encode(r);
  }
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
  // The 16-bit floats' reductions, created at first use: [bfloat16?][sum, prod, min, max].
  MPI_Op ops_16[2][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                         {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};

  MPI_Op reduction(const std::string& dtype, const std::string& op) {
    if (!is_16_bit_float(dtype)) return mpi_op(op);
    const char* names[] = {"sum", "prod", "min", "max"};
    int which = 0;
    while (which < 4 && op != names[which]) ++which;
    if (which == 4) throw Error(Errc::invalid_argument, "no " + op + " reduction of " + dtype);
    const bool bf = dtype == "bfloat16";
    MPI_Op& made = ops_16[bf][which];
    if (made == MPI_OP_NULL) {
      MPI_User_function* const fns[2][4] = {
          {combine_16<float16_to_double, float16_from_double, Combine::sum>,
           combine_16<float16_to_double, float16_from_double, Combine::prod>,
           combine_16<float16_to_double, float16_from_double, Combine::min>,
           combine_16<float16_to_double, float16_from_double, Combine::max>},
          {combine_16<bfloat16_to_double, bfloat16_from_double, Combine::sum>,
           combine_16<bfloat16_to_double, bfloat16_from_double, Combine::prod>,
           combine_16<bfloat16_to_double, bfloat16_from_double, Combine::min>,
           combine_16<bfloat16_to_double, bfloat16_from_double, Combine::max>}};
      check_mpi(MPI_Op_create(fns[bf][which], 1, &made), "MPI_Op_create");
    }
    return made;
  }
};

MpiCollectives::MpiCollectives(const Comm& comm) : impl_(std::make_unique<Impl>()) {
  if (!comm.is_mpi()) throw Error(Errc::environment, "MPI is not running (one rank without mpirun)");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm), "MPI_Comm_dup");
}

MpiCollectives::~MpiCollectives() {
  for (auto& per_type : impl_->ops_16) {
    for (MPI_Op& op : per_type) {
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
    }
  }
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

void MpiCollectives::run(const std::string& collective, const void* send, void* recv, uint64_t count,
                         const std::string& dtype, const std::string& op, int root) {
  const MPI_Datatype type = mpi_type(dtype);
  const int n = static_cast<int>(count);
  const void* in = send == recv ? MPI_IN_PLACE : send;
  const MPI_Comm comm = impl_->comm;
  if (collective == "all_reduce") {
    check_mpi(MPI_Allreduce(in, recv, n, type, impl_->reduction(dtype, op), comm), "MPI_Allreduce");
  } else if (collective == "all_gather") {
    // In place as NCCL has it: this rank's chunk already at its place in recv.
    int me = 0, size_of_type = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Type_size(type, &size_of_type);
    const bool in_place = send == static_cast<const char*>(recv) + static_cast<size_t>(me) * count * size_of_type;
    check_mpi(MPI_Allgather(in_place ? MPI_IN_PLACE : send, n, type, recv, n, type, comm), "MPI_Allgather");
  } else if (collective == "reduce_scatter") {
    check_mpi(MPI_Reduce_scatter_block(send, recv, n, type, impl_->reduction(dtype, op), comm), "MPI_Reduce_scatter_block");
  } else if (collective == "all_to_all") {
    check_mpi(MPI_Alltoall(send, n, type, recv, n, type, comm), "MPI_Alltoall");
  } else if (collective == "broadcast") {
    check_mpi(MPI_Bcast(recv, n, type, root, comm), "MPI_Bcast");
  } else if (collective == "reduce") {
    check_mpi(MPI_Reduce(in, recv, n, type, impl_->reduction(dtype, op), root, comm), "MPI_Reduce");
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
