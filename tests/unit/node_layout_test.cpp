// Which ranks form a node (session/node_layout.hpp): hosts, simulated nodes, and layouts refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "session/node_layout.hpp"

using iris::session::make_node_layout;

TEST_CASE("without a node size, a node is a host, nodes in the order of their first rank", "[unit][nodes]") {
  // Ranks placed round-robin over two hosts (leaders 0 and 1).
  const auto l = make_node_layout({0, 1, 0, 1, 0}, 0, "");
  CHECK(l.nodes() == 2);
  CHECK(l.node_of == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(l.local_rank_of == std::vector<int>{0, 0, 1, 1, 2});
  CHECK(l.node_sizes == std::vector<int>{3, 2});
  CHECK(l.ranks_of(1) == std::vector<int>{1, 3});
  CHECK(l.same_node(0, 4));
  CHECK_FALSE(l.same_node(0, 1));
}

TEST_CASE("a node size groups consecutive ranks; the last node may be smaller", "[unit][nodes]") {
  const auto four = make_node_layout({0, 0, 0, 0}, 2, "IRIS_NODE_SIZE=2");
  CHECK(four.node_of == std::vector<int>{0, 0, 1, 1});
  CHECK(four.local_rank_of == std::vector<int>{0, 1, 0, 1});
  const auto three = make_node_layout({0, 0, 0}, 2, "IRIS_NODE_SIZE=2");
  CHECK(three.node_sizes == std::vector<int>{2, 1});
  CHECK(three.local_rank_of == std::vector<int>{0, 1, 0});
  // Two hosts of 4, simulated nodes of 2 inside each.
  const auto hosts = make_node_layout({0, 0, 0, 0, 4, 4, 4, 4}, 2, "IRIS_NODE_SIZE=2");
  CHECK(hosts.nodes() == 4);
  CHECK(make_node_layout({0, 0}, 8, "").nodes() == 1);  // larger than the job: one node
}

TEST_CASE("a simulated node that would span two hosts is refused, naming the ranks", "[unit][nodes]") {
  try {
    make_node_layout({0, 0, 0, 3, 3, 3}, 2, "IRIS_NODE_SIZE=2");
    FAIL("expected an error");
  } catch (const iris::Error& e) {
    const std::string text = e.what();
    CHECK(text.find("IRIS_NODE_SIZE=2 puts ranks 2 and 3 in one simulated node") != std::string::npos);
    CHECK(text.find("the host of rank 2 runs 3") != std::string::npos);
  }
}
