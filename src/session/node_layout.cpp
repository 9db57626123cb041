#include "session/node_layout.hpp"

#include <map>

#include "core/error.hpp"

namespace iris::session {

std::vector<int> NodeLayout::ranks_of(int node) const {
  std::vector<int> ranks;
  for (size_t r = 0; r < node_of.size(); ++r) {
    if (node_of[r] == node) ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

NodeLayout make_node_layout(const std::vector<int>& host_of, int node_size, const std::string& source) {
  NodeLayout layout;
  const int world = static_cast<int>(host_of.size());
  layout.node_size = node_size;
  layout.node_of.assign(world, 0);
  layout.local_rank_of.assign(world, 0);
  if (node_size > 0) {
    for (int r = 0; r < world; ++r) {
      const int first = r - r % node_size;
      if (host_of[r] != host_of[first]) {
        int on_host = 0;
        for (int q = 0; q < world; ++q) on_host += host_of[q] == host_of[first] ? 1 : 0;
        throw Error(Errc::environment,
                    format("%s puts ranks %d and %d in one simulated node, but they run on different hosts: a node's "
                           "ranks map each other's heaps, so a simulated node lies inside one host. Choose a node "
                           "size that divides each host's ranks (the host of rank %d runs %d), or leave it unset "
                           "(one node per host)",
                           source.c_str(), first, r, first, on_host));
      }
      layout.node_of[r] = r / node_size;
      layout.local_rank_of[r] = r % node_size;
    }
    layout.node_sizes.assign((world + node_size - 1) / node_size, 0);
  } else {
    std::map<int, int> node_of_host;  // in the order of each host's first rank
    for (int r = 0; r < world; ++r) {
      auto [it, fresh] = node_of_host.emplace(host_of[r], static_cast<int>(node_of_host.size()));
      (void)fresh;
      layout.node_of[r] = it->second;
    }
    layout.node_sizes.assign(node_of_host.size(), 0);
    std::vector<int> seen(node_of_host.size(), 0);
    for (int r = 0; r < world; ++r) layout.local_rank_of[r] = seen[layout.node_of[r]]++;
  }
  for (int r = 0; r < world; ++r) ++layout.node_sizes[layout.node_of[r]];
  return layout;
}

}  // namespace iris::session
