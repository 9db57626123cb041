// The ranks every MPI test shares: one Comm for the process, over the MPI that main() initialized.
#pragma once

#include "comm/comm.hpp"

namespace iris::testing {

inline comm::Comm& test_comm() {
  static std::unique_ptr<comm::Comm> comm = comm::Comm::create(nullptr, nullptr);
  return *comm;
}

}  // namespace iris::testing
