// MPI's own collectives over every rank: what the collectives benchmark compares ctx.ccl with on the cpu
// backend (iris_reference_*, scripts/bench/ccl_bench.lua). On a communicator of its own, a duplicate of
// the job's, so nothing it does meets comm's announced collectives. MPI stays inside comm: this header
// names no MPI type.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace iris::comm {

class Comm;

class MpiCollectives {
 public:
  // Collective over every rank of `comm`. Throws Error(environment) when the job runs without MPI.
  explicit MpiCollectives(const Comm& comm);
  ~MpiCollectives();
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  // `collective` ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast") of `count`
  // elements of `dtype` (a dtype name; 16-bit floats as words reduced by operations of this class) per rank as capi_reference.h counts
  // them, reducing with `op` ("sum", ...), from `root` (broadcast). `send` may be `recv` (in place).
  // Throws Error(invalid_argument) for what MPI cannot do, Error(environment) when MPI fails.
  void run(const std::string& collective, const void* send, void* recv, uint64_t count, const std::string& dtype,
           const std::string& op, int root);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace iris::comm
