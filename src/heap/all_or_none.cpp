#include "heap/all_or_none.hpp"

namespace iris::heap::detail {

void agree(comm::Comm& comm, const std::string& what, const std::string& own_failure, Errc own_code) {
  // Success costs one collective: the announcement, whose argument says whether this rank failed. Only
  // when some rank did do the messages travel.
  bool any_failed = false;
  for (const auto& announced : comm.announce(what, own_failure.empty() ? 0 : 1)) any_failed |= announced.arg != 0;
  if (!any_failed) return;
  // A failure travels as its Errc (one byte: every rank runs the same binary) and its message.
  std::string mine = own_failure.empty() ? "" : std::string(1, static_cast<char>(own_code)) + own_failure;
  auto all = comm.allgatherv(mine.data(), mine.size());
  if (!own_failure.empty()) throw Error(own_code, own_failure);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const std::string text(all[r].begin(), all[r].end());
    throw Error(static_cast<Errc>(static_cast<unsigned char>(text[0])),
                format("rank %zu failed in %s: %s", r, what.c_str(), text.substr(1).c_str()));
  }
}

}  // namespace iris::heap::detail
