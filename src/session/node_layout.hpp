// Which ranks form a node (docs/multinode.md). A node is the set of ranks that reach each other's heaps
// through peer mappings; between nodes the host proxy and the transport carry the traffic. A node is
// the ranks of one host, or, with a node size (IRIS_NODE_SIZE, iris.init{node_size=}), a group of that
// many consecutive ranks inside one host: a simulated node, so one machine can test the inter-node path.
#pragma once

#include <string>
#include <vector>

namespace iris::session {

struct NodeLayout {
  std::vector<int> node_of;        // rank -> node (0-based, nodes ordered by their first rank)
  std::vector<int> local_rank_of;  // rank -> its position among its node's ranks
  std::vector<int> node_sizes;     // node -> its number of ranks
  int node_size = 0;               // the simulated nodes' size; 0: one node per host

  int nodes() const { return static_cast<int>(node_sizes.size()); }
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  std::vector<int> ranks_of(int node) const;
};

// `host_of[r]`: an id the ranks of one host share (Comm::host_leader). `node_size` 0: one node per
// host. Throws Error(environment) when a simulated node would span two hosts (its ranks could not map
// each other's heaps), naming the ranks and what to do; a last node with fewer ranks is allowed.
NodeLayout make_node_layout(const std::vector<int>& host_of, int node_size, const std::string& source);

}  // namespace iris::session
