#include "heap/all_or_none.hpp"

#include <cstring>

namespace iris::heap::detail {
namespace {

Errc code_named(const std::string& name) {
#define IRIS_ERROR(id, exit_code, summary) \
  if (name == #id) return Errc::id;
#include "core/errors.def"
#undef IRIS_ERROR
  return Errc::internal;
}

}  // namespace

void agree(comm::Comm& comm, const std::string& what, const std::string& own_failure, Errc own_code) {
  comm.announce(what, 0);
  std::string mine = own_failure.empty() ? "" : std::string(name_of(own_code)) + "\n" + own_failure;
  auto all = comm.allgatherv(mine.data(), mine.size());
  if (!own_failure.empty()) throw Error(own_code, own_failure);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    std::string text(all[r].begin(), all[r].end());
    size_t newline = text.find('\n');
    throw Error(code_named(text.substr(0, newline)),
                format("rank %zu failed in %s: %s", r, what.c_str(), text.substr(newline + 1).c_str()));
  }
}

}  // namespace iris::heap::detail
